build-dev/obj/src/engine/hooks.o: src/engine/hooks.c src/engine/hooks.h \
 include/remem.h
src/engine/hooks.h:
include/remem.h:
