import SQLRest

// Options as employees-server's, under PRODUCTS_ (PRODUCTS_PORT, ...);
// the database from DATABASE_URL or the PG* variables.
ServerProgram(
    name: "products-server", overview: "Products and their prices.",
    environmentPrefix: "PRODUCTS_", services: [ProductsService()]
).run()
