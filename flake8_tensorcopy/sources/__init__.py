"""Reading sources: files (bytes, encodings, atomic writes), notebooks, IPython syntax."""
