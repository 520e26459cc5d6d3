"""Where the nightly job reads messages from besides the chat: the GitHub daily files."""
