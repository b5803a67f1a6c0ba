package io.ehrelay.replay;

/**
 * The container suites for the RMI transport: registry on port 40001 of each container, peers named as stock
 * {@code rmiUrls} by host name, stubs carrying the container's own address.
 */
class RmiContainersIT extends ContainersSuite {

    @Override
    protected String transport() {
        return "rmi";
    }
}
