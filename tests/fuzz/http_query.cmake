# What the HTTP face reads past a request's head: the query string (its
# values, the task API's parameters and task options, a route's body
# limit) and the JSON bodies of the task API's batches (the first byte of
# an input picks one).
sluice_fuzz(http_query LIBS sluice_server)
