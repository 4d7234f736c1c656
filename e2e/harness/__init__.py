"""The e2e tier's harness: real programs started on 127.0.0.1 and driven by the tests."""
