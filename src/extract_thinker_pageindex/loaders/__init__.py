"""Document loaders that follow ExtractThinker's loader protocol."""
