import FoundationEssentials
import HTTPServer

/// Finds out what a type looks like for the documentation: scalars by
/// their ``ParameterValue`` conformance, arrays, optionals and dictionaries
/// by their element type, and `Decodable` structures by decoding one sample
/// value with a decoder that records every field asked for.
///
/// Not thread-safe: one introspector describes one service, once.
final class TypeIntrospector {
    private(set) var structures: [StructureDocumentation] = []
    private(set) var enumerations: [EnumerationDocumentation] = []
    private var known: Set<String> = []

    func describe(_ type: Any.Type) -> ValueType {
        let valueType = shallowType(type)
        register(valueType)
        return valueType
    }

    private func shallowType(_ type: Any.Type) -> ValueType {
        if let parameterType = type as? any ParameterValue.Type {
            return parameterType.valueType
        }
        if let optional = type as? any OptionalType.Type {
            return describe(optional.wrappedType)
        }
        if let array = type as? any ArrayType.Type {
            return .array(describe(array.elementType))
        }
        if let dictionary = type as? any StringKeyedDictionaryType.Type {
            return .map(describe(dictionary.valueType))
        }
        if let values = enumerationValues(type) {
            return .enumeration(name: String(describing: type), values: values)
        }
        switch type {
        case is Float.Type, is Decimal.Type: return .double
        case is Int8.Type, is Int16.Type, is Int32.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type: return .integer
        case is UInt.Type, is UInt64.Type: return .long
        default: break
        }
        if let decodable = type as? any Decodable.Type {
            return describeDecodable(decodable)
        }
        return .structure(String(describing: type))
    }

    /// Adds a structure described at run time (a ``ResultDescription``'s), unless one of its name is known.
    func register(_ structure: StructureDocumentation) {
        guard known.insert(structure.name).inserted else { return }
        structures.append(structure)
        for field in structure.fields { register(field.type) }
    }

    /// Adds an enumeration described at run time, unless one of its name is known.
    func register(_ enumeration: EnumerationDocumentation) {
        guard known.insert(enumeration.name).inserted else { return }
        enumerations.append(enumeration)
    }

    /// Adds the enumerations `type` names.
    func register(_ type: ValueType) {
        switch type {
        case .enumeration(let name, let values) where !known.contains(name):
            known.insert(name)
            enumerations.append(EnumerationDocumentation(name: name, values: values))
        case .array(let element), .map(let element):
            register(element)
        default:
            break
        }
    }

    private func describeDecodable<T: Decodable>(_ type: T.Type) -> ValueType {
        let name = String(describing: type)
        if known.contains(name) { return .structure(name) }
        known.insert(name)
        let recorder = RecordingDecoder(introspector: self)
        _ = try? T(from: recorder)
        switch recorder.shape {
        case .keyed, .none:
            structures.append(StructureDocumentation(name: name, fields: recorder.fields))
            return .structure(name)
        case .single(let valueType):
            known.remove(name)
            return valueType
        case .unkeyed:
            known.remove(name)
            return .array(.any)
        }
    }

    private func enumerationValues(_ type: Any.Type) -> [String]? {
        guard let caseIterable = type as? any CaseIterable.Type else { return nil }
        func rawValues<T: CaseIterable>(_ type: T.Type) -> [String]? {
            let values = T.allCases.compactMap { ($0 as? any RawRepresentable)?.rawValue as? String }
            return values.count == T.allCases.count ? values : nil
        }
        return rawValues(caseIterable)
    }

    // MARK: - Samples

    /// A value of `type` to hand back to the decoding type in progress.
    static func sample<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = scalarSample(type) as? T { return value }
        if let caseIterable = type as? any CaseIterable.Type {
            func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { C.allCases.first }
            if let value = firstCase(caseIterable) as? T { return value }
        }
        return try T(from: RecordingDecoder(introspector: nil))
    }

    private static func scalarSample(_ type: Any.Type) -> Any? {
        switch type {
        case is String.Type: ""
        case is Bool.Type: false
        case is Int.Type: 0 as Int
        case is Int64.Type: 0 as Int64
        case is Int32.Type: 0 as Int32
        case is Int16.Type: 0 as Int16
        case is Int8.Type: 0 as Int8
        case is UInt.Type: 0 as UInt
        case is UInt64.Type: 0 as UInt64
        case is UInt32.Type: 0 as UInt32
        case is UInt16.Type: 0 as UInt16
        case is UInt8.Type: 0 as UInt8
        case is Double.Type: 0 as Double
        case is Float.Type: 0 as Float
        case is Decimal.Type: Decimal(0)
        case is Date.Type: Date(timeIntervalSince1970: 0)
        case is CalendarDate.Type: CalendarDate(year: 1970, month: 1, day: 1)
        case is UUID.Type: UUID()
        case is URL.Type: URL(string: "http://localhost/") ?? URL(filePath: "/")
        case is UploadedFile.Type: UploadedFile(filename: nil, contentType: nil, path: "", size: 0)
        default: nil
        }
    }
}

// MARK: - Container types

protocol OptionalType { static var wrappedType: Any.Type { get } }
extension Optional: OptionalType { static var wrappedType: Any.Type { Wrapped.self } }

protocol ArrayType { static var elementType: Any.Type { get } }
extension Array: ArrayType { static var elementType: Any.Type { Element.self } }

protocol StringKeyedDictionaryType { static var valueType: Any.Type { get } }
extension Dictionary: StringKeyedDictionaryType where Key == String { static var valueType: Any.Type { Value.self } }
