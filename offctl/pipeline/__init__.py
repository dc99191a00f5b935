"""The one pipeline every face calls: read (offctl.pipeline.read), then assess (offctl.pipeline.assess);
`inspect` (offctl.pipeline.inspect) is the two in one call."""
