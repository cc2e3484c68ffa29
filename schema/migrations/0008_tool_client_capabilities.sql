-- Tools an upstream lists only to clients that declare sampling, elicitation or roots (issue 13): the capabilities,
-- as a JSON array, a client must declare (all of them) to see or call the tool. NULL: every client.
ALTER TABLE tools ADD COLUMN client_capabilities TEXT;
