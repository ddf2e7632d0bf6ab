// `CalendarDate` is part of this module's API (arguments and results that
// are days), so a service that imports WebService has it without a second import.
@_exported import CalendarDates
