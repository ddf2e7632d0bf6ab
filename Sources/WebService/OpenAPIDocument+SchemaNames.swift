// MARK: - One name per shape in components/schemas

/// The names `components/schemas` gives the services' structures and
/// enumerations, unique across the whole document, so that every `$ref`
/// names the shape its service means.
///
/// A type keeps its own name unless the document already gave that name
/// to a different shape (another service's `Invoice` with other fields,
/// another `Status` with other values; shapes compared with the types
/// they refer to, so an `Invoice` whose `InvoiceLine` differs differs too).
/// It is then qualified by its service's path, in UpperCamelCase: the
/// `Invoice` of `/customers` becomes `CustomersInvoice`; a number follows
/// should that be taken as well (`CustomersInvoice2`). The same shape under
/// the same name in several services is one schema. Services are taken in
/// the order they are mounted, so the names are the same on every start.
/// `Problem` is the problem documents' own.
///
/// ```swift
/// let names = SchemaNames(services: documentation, reserved: ["Problem"])
/// names.name("Invoice", service: 1)   // "CustomersInvoice"
/// ```
struct SchemaNames: Sendable {
    /// A name of the document: the type it stands for, by its service's index and its name there.
    struct Entry: Sendable {
        let name: String
        let service: Int
        let original: String
        let isEnumeration: Bool
    }

    /// The document's names in order: each service's enumerations, then its structures.
    private(set) var entries: [Entry] = []
    /// By service index, each type's name in the service → its name in the document.
    private var byService: [[String: String]] = []

    init(services: [ServiceDocumentation], reserved: Set<String>) {
        var taken = reserved
        var seen: [String: [(shape: [UInt8], name: String)]] = [:]
        for (index, service) in services.enumerated() {
            var names: [String: String] = [:]
            let types = service.enumerations.map { ($0.name, true) } + service.structures.map { ($0.name, false) }
            for (original, isEnumeration) in types where names[original] == nil {
                let shape = Self.shape(of: original, in: service, visiting: []).jsonBytes
                if let same = seen[original]?.first(where: { $0.shape == shape }) {
                    names[original] = same.name
                    continue
                }
                let base = taken.contains(original) ? Self.qualifier(service.path) + original : original
                var name = base
                var number = 2
                while taken.contains(name) {
                    name = base + String(number)
                    number += 1
                }
                taken.insert(name)
                seen[original, default: []].append((shape, name))
                names[original] = name
                entries.append(Entry(name: name, service: index, original: original, isEnumeration: isEnumeration))
            }
            byService.append(names)
        }
    }

    /// The document's name of the type `original` of the service at `service`; `nil` when the service describes none.
    func name(_ original: String, service: Int) -> String? {
        service < byService.count ? byService[service][original] : nil
    }

    /// `/customers` → `Customers`, `/api/v1-beta` → `ApiV1Beta`: the path's
    /// runs of ASCII letters and digits, each with a capital first.
    static func qualifier(_ path: String) -> String {
        let parts = path.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
        let joined = parts.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return joined.first?.isNumber == true ? "S" + joined : joined
    }

    /// What tells two types of one name apart: an enumeration's values, a
    /// structure's fields with the shapes of the types they refer to.
    private static func shape(of name: String, in service: ServiceDocumentation, visiting: [String]) -> JSONValue {
        if let enumeration = service.enumerations.first(where: { $0.name == name }) {
            return ["enum": .array(enumeration.values.map(JSONValue.string))]
        }
        guard let structure = service.structures.first(where: { $0.name == name }) else { return ["undescribed": .string(name)] }
        if visiting.contains(name) { return ["recursive": .string(name)] }
        let fields = structure.fields.map { field -> JSONValue in
            [
                "name": .string(field.name), "required": .bool(field.required),
                "type": shape(of: field.type, in: service, visiting: visiting + [name]),
            ]
        }
        return ["fields": .array(fields), "membersChosen": .bool(structure.membersChosen)]
    }

    private static func shape(of type: ValueType, in service: ServiceDocumentation, visiting: [String]) -> JSONValue {
        switch type {
        case .structure(let name): shape(of: name, in: service, visiting: visiting)
        case .enumeration(let name, let values):
            service.enumerations.contains { $0.name == name }
                ? shape(of: name, in: service, visiting: visiting) : ["enum": .array(values.map(JSONValue.string))]
        case .array(let element): ["array": shape(of: element, in: service, visiting: visiting)]
        case .map(let value): ["map": shape(of: value, in: service, visiting: visiting)]
        default: .string(type.name)
        }
    }
}
