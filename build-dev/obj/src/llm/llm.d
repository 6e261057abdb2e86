build-dev/obj/src/llm/llm.o: src/llm/llm.c src/llm/llm.h src/net/net.h \
 src/util/util.h src/util/time.h include/remem.h src/util/utf8.h
src/llm/llm.h:
src/net/net.h:
src/util/util.h:
src/util/time.h:
include/remem.h:
src/util/utf8.h:
