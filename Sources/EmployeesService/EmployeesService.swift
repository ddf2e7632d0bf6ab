// Placeholder so the package resolves; replaced by the EmployeesService layer.
