"""Memory: taxonomy, envelope, store adapters, the harvester (one writer) and the reader."""
