import PostgreSQL
import WebService

/// The structures `?api` shows for the rows of a service's operations,
/// made from the columns PostgreSQL described: one field per column label
/// (a dotted label, `"name.first"`, a field of a nested structure), its
/// type from the column's, required when the column is a table column
/// declared `NOT NULL`; each detail a field holding a list of its own
/// structure, present when asked for.
///
/// Names are made from the service's name (`employees`: `Employee`, its
/// detail `titles`: `EmployeeTitle`), or given by `@returns ... TypeName`.
/// Two different structures of one name in a service are told apart by a
/// number (`Employee2`).
struct ResultStructures {
    let catalog: [PostgresType: PostgresTypeDescription]
    private(set) var structures: [StructureDocumentation] = []
    private(set) var enumerations: [EnumerationDocumentation] = []

    init(catalog: [PostgresType: PostgresTypeDescription]) {
        self.catalog = catalog
    }

    /// A row with these columns and these members (details, streamed
    /// lists), as a structure named `name` or a numbered variant of it;
    /// returns the name given. `membersChosen`: a request may leave out any
    /// member (`select`), which the structure then says for every use of it.
    mutating func structure(
        named name: String, columns: [StatementDescription.ResultColumn], members: [(name: String, type: ValueType)],
        membersChosen: Bool = false
    ) -> String {
        var entries: [(path: [Substring], type: ValueType, required: Bool)] = columns.map { column in
            let type = ArgumentType.documentedType(of: column.type, catalog: catalog)
            return (column.label.split(separator: ".", omittingEmptySubsequences: false), type, !column.isNullable)
        }
        for member in members { entries.append(([Substring(member.name)], member.type, false)) }
        let given = add(name, fields: fields(of: entries, structureName: name))
        if membersChosen, let index = structures.firstIndex(where: { $0.name == given }) { structures[index].membersChosen = true }
        return given
    }

    /// Fields of `entries`, those with a dotted label grouped in nested structures.
    private mutating func fields(
        of entries: [(path: [Substring], type: ValueType, required: Bool)], structureName: String
    ) -> [StructureDocumentation.Field] {
        var fields: [StructureDocumentation.Field] = []
        var done: Set<Substring> = []
        for entry in entries {
            let head = entry.path[0]
            if entry.path.count == 1 {
                fields.append(.init(String(head), type: entry.type, required: entry.required))
                registerEnumerations(in: entry.type)
                continue
            }
            guard done.insert(head).inserted else { continue }
            let nested = entries.filter { $0.path.count > 1 && $0.path[0] == head }.map {
                (Array($0.path.dropFirst()), $0.type, $0.required)
            }
            let nestedName = structureName + Inflection.typeName(String(head))
            let given = add(nestedName, fields: self.fields(of: nested, structureName: nestedName))
            fields.append(.init(String(head), type: .structure(given), required: true))
        }
        return fields
    }

    /// Adds a structure, or finds one of its name that it fits; returns the
    /// name given. Two structures fit when one has every field of the
    /// other and more that are optional (a list's rows, an object's with
    /// its details): the larger one stands for both.
    private mutating func add(_ name: String, fields: [StructureDocumentation.Field]) -> String {
        var candidate = name
        var number = 1
        while let index = structures.firstIndex(where: { $0.name == candidate }) {
            let existing = structures[index].fields
            if Self.extends(existing, fields) { return candidate }
            if Self.extends(fields, existing) {
                structures[index] = StructureDocumentation(candidate, fields: fields, membersChosen: structures[index].membersChosen)
                return candidate
            }
            number += 1
            candidate = name + String(number)
        }
        structures.append(StructureDocumentation(candidate, fields: fields))
        return candidate
    }

    /// Whether `larger` has every field of `smaller` (same name, type and
    /// requirement, in the same order), and its others are optional.
    private static func extends(_ larger: [StructureDocumentation.Field], _ smaller: [StructureDocumentation.Field]) -> Bool {
        var remaining = smaller[...]
        for field in larger {
            if let next = remaining.first, next.name == field.name {
                guard next.type == field.type, next.required == field.required else { return false }
                remaining = remaining.dropFirst()
            } else if field.required {
                return false
            }
        }
        return remaining.isEmpty
    }

    private mutating func registerEnumerations(in type: ValueType) {
        switch type {
        case .enumeration(let name, let values) where !enumerations.contains(where: { $0.name == name }):
            enumerations.append(EnumerationDocumentation(name, values: values))
        case .array(let element):
            registerEnumerations(in: element)
        default:
            break
        }
    }
}
