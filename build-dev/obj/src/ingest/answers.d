build-dev/obj/src/ingest/answers.o: src/ingest/answers.c \
 src/ingest/ingest.h src/llm/llm.h src/util/time.h src/util/utf8.h \
 src/util/util.h
src/ingest/ingest.h:
src/llm/llm.h:
src/util/time.h:
src/util/utf8.h:
src/util/util.h:
