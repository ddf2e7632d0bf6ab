import Foundation
import SQLRest

/// Products and their prices: a list, one product with its details, and a write.
struct ProductsService: WebService {
    let path = "/products"
    let description = "Products and their prices."

    var routes: [Route] {
        Route(
            .get, "/", description: "Lists the products whose name contains `name`.", returns: [Product].self,
            Parameter<String>("name", default: "", description: "Part of the name.")
        ) { name in
            Query.list("SELECT id, name FROM products WHERE name ILIKE '%' || :name || '%' ORDER BY id", ["name": name])
        }

        Route(
            .get, "/?:id", description: "Returns one product, with the details asked for.", returns: Product.self,
            Parameter<Int>("id", description: "The product's id."),
            Parameter<CommaList<ProductDetail>>("details", description: "What to nest.")
        ) { id, details in
            Query.object("SELECT id, name FROM products WHERE id = :id", ["id": id], notFound: "No product \(id).")
                .attaching(details.map { ($0.rawValue, $0.sql) })
        }

        Route(
            .post, "/", description: "Adds a product at a price.", returns: Product.self,
            Parameter<String>("name", description: "The product's name."),
            Parameter<Double>("price", description: "Its price from today.")
        ) { name, price in
            Query.transaction(
                [
                    """
                    WITH product AS (INSERT INTO products (name) VALUES (:name) RETURNING id, name),
                         price AS (INSERT INTO prices (product_id, amount) SELECT id, :price FROM product)
                    SELECT id, name FROM product
                    """
                ], ["name": name, "price": price]
            ).created(at: "/products/{id}")
        }
    }
}

enum ProductDetail: String, CaseIterable, ArgumentValue {
    case prices

    var sql: String {
        switch self {
        case .prices: "SELECT amount, since FROM prices WHERE product_id = :id ORDER BY since"
        }
    }
}

struct Product: Codable {
    var id: Int
    var name: String
    var prices: [Price]?
}

struct Price: Codable {
    var amount: Double
    var since: CalendarDate
}
