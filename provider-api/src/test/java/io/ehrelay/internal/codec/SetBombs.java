package io.ehrelay.internal.codec;

import java.util.HashSet;
import java.util.Set;

/** Values whose hashing grows exponentially with their size, for the tests and benchmarks of {@code maxHashWork}. */
public final class SetBombs {

    private SetBombs() {
    }

    /** The nested-set bomb: {@code depth} levels, each level's two sets holding the next level's two. */
    public static Set<Object> bomb(int depth) {
        Set<Object> root = new HashSet<>();
        Set<Object> s1 = root;
        Set<Object> s2 = new HashSet<>();
        for (int i = 0; i < depth; i++) {
            Set<Object> t1 = new HashSet<>();
            Set<Object> t2 = new HashSet<>();
            t1.add("x" + i);
            s1.add(t1);
            s1.add(t2);
            s2.add(t1);
            s2.add(t2);
            s1 = t1;
            s2 = t2;
        }
        return root;
    }
}
