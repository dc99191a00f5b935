"""offctl held to what Storm's and Kafka's own classes do, run: the Java drivers and the tests that ask them."""
