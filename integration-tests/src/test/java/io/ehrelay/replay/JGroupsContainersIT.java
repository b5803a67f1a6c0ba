package io.ehrelay.replay;

/**
 * The container suites for the JGroups transport: the shipped TCP stack with TCPPING over the containers' host
 * names for the replay and the late joiner, the shipped UDP stack (IP multicast, TTL 1) between containers on
 * their bridge network for the multicast test.
 */
class JGroupsContainersIT extends ContainersSuite {

    @Override
    protected String transport() {
        return "jgroups";
    }
}
