build-dev/obj/src/score/score.o: src/score/score.c src/score/score.h \
 include/remem.h
src/score/score.h:
include/remem.h:
