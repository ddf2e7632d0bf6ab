// Placeholder so the package resolves; replaced by the PostgreSQL layer.
