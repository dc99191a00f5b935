"""Tests of offctl's pure parts on plain data: no test here starts a server."""
