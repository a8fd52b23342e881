"""The page and the HTTP doors under test: a served installation, a browser, other accounts."""
