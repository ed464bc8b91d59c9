"""A browser for the tests ($BROWSER="python tests/browser.py %s"): it fetches the URL and
follows its redirects, the last of which lands on uji's loopback callback, as a user's
browser does once they approve."""

import sys
import urllib.request

with urllib.request.urlopen(sys.argv[1], timeout=60) as response:
    response.read()
