build-dev/obj/src/store/postgres.o: src/store/postgres.c \
 src/store/store.h include/remem.h /usr/include/postgresql/libpq-fe.h \
 /usr/include/postgresql/postgres_ext.h \
 /usr/include/postgresql/pg_config_ext.h src/util/util.h src/util/time.h
src/store/store.h:
include/remem.h:
/usr/include/postgresql/libpq-fe.h:
/usr/include/postgresql/postgres_ext.h:
/usr/include/postgresql/pg_config_ext.h:
src/util/util.h:
src/util/time.h:
