import CalendarDates

extension CalendarDate: ArgumentValue {
    public static var valueType: ValueType { .date }

    /// Reads exactly `YYYY-MM-DD` of a day that exists.
    public init?(argumentText: String) { self.init(argumentText) }
}
