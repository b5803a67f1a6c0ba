package io.ehrelay.replay;

/** The container suites for the Hessian/HTTP transport: peers named {@code http://node-b:40001/ehrelay}. */
class HessianContainersIT extends ContainersSuite {

    @Override
    protected String transport() {
        return "hessian";
    }
}
