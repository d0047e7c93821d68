"""The web page of ``midnight serve``: watch records and tournament games, play against agents,
see leaderboards, in a browser on this machine; and ``midnight render --html``, one game as a
self-contained HTML file.

==============  =======================================================================================
``views``       a game as the page shows it: the board's SVG once, a frame (SVG and facts) per position
``sources``     the data folder's record files and databases (nothing outside it is read), uploads
``play``        a person's game against agents, kept by the server, recorded into the data folder
``checks``      a request's fields checked for their type and range; the limits on what one may cost
``app``         the Starlette app: the page and its JSON API (needs the ``web`` extra)
``export``      one game as a single HTML file: the page's viewer with the game inside, no server
``static/``     the page: one HTML file, its script and its style; nothing loaded from the network
==============  =======================================================================================

Only ``app`` imports the web framework: a game view and the HTML file need none.
"""
