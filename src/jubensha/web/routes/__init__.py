"""The app's routes by area: the lobby, a table's host page, a seat, a spectator, reviews.
Each module holds one ``router`` whose access rules are dependencies (``web.access``)."""
