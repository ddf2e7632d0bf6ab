/// Names made from a service's path: the singular of its name, and type
/// names for the documentation.
///
/// ```swift
/// Inflection.singular("employees")          // "employee"
/// Inflection.typeName("dept_emp")           // "DeptEmp"
/// ```
enum Inflection {
    /// The English singular of a plural noun, by the common rules
    /// (`categories` → `category`, `addresses` → `address`, `boxes` →
    /// `box`, `employees` → `employee`); a word that does not end in `s`
    /// is left as it is.
    static func singular(_ word: String) -> String {
        let lower = word.lowercased()
        if lower.hasSuffix("ies"), word.count > 3 { return word.dropLast(3) + "y" }
        if lower.hasSuffix("ouses") { return String(word.dropLast()) }
        for ending in ["sses", "xes", "zes", "ches", "shes", "uses"] where lower.hasSuffix(ending) {
            return String(word.dropLast(2))
        }
        if lower.hasSuffix("ss") || lower.hasSuffix("us") || lower.hasSuffix("is") { return word }
        if lower.hasSuffix("s"), word.count > 1 { return String(word.dropLast()) }
        return word
    }

    /// `word` as a type name: each part between `-`, `_` and `.` capitalised and joined.
    static func typeName(_ word: String) -> String {
        word.split(whereSeparator: { $0 == "-" || $0 == "_" || $0 == "." }).map { part in
            part.prefix(1).uppercased() + part.dropFirst()
        }.joined()
    }
}
