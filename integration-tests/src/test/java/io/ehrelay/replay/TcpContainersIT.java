package io.ehrelay.replay;

/** The container suites for the TCP transport. */
class TcpContainersIT extends ContainersSuite {

    @Override
    protected String transport() {
        return "tcp";
    }
}
