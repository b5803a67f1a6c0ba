#!/bin/sh
# Starts the Java 11 suite's node program with remote JMX on port 9010 (no auth, no TLS: test containers on the
# suite's own internal network only), announced at this container's own address.
IP=$(hostname -i | cut -d' ' -f1)
exec java -Xmx256m \
  -Dcom.sun.management.jmxremote.port=9010 -Dcom.sun.management.jmxremote.rmi.port=9010 \
  -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false \
  -Djava.rmi.server.hostname="$IP" -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
  -Dsun.net.inetaddr.negative.ttl=1 \
  -cp '/app/classes:/app/lib/*' io.ehrelay.it11.Java11Node "$@"
