build-dev/obj/tests/support/embed_server.o: tests/support/embed_server.c \
 tests/support/embed_server.h
tests/support/embed_server.h:
