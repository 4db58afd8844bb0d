"""Search: many queries against a database, with E-values and bit scores."""
