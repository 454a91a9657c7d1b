"""Post-processing that turns per-page extractions into one coherent document."""
