// What a service needs, in one import: routes and handlers (WebService),
// queries and the pool (PostgreSQL), the two joined (PostgreSQLWebService),
// and the program that hosts them (ServiceHost).
//
// ```swift
// import SQLRest
//
// ServerProgram(name: "products-server", overview: "Products and their prices.",
//               environmentPrefix: "PRODUCTS_", services: [ProductsService()]).run()
// ```
@_exported import PostgreSQL
@_exported import PostgreSQLWebService
@_exported import ServiceHost
@_exported import WebService
