"""The static wiki: an index in, a site folder out (pages, the browser bundle and runtime), checked
before it is published, then served locally or published to object storage."""
