"""How every view looks: theme, text scale, plain text, wrapping of long names."""
