"""The parallel portfolio's parts: the kinds of search its workers run, and how cores go to them."""
