// Placeholder so the package resolves; replaced by the WebService layer.
