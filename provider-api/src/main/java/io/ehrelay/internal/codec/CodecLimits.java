package io.ehrelay.internal.codec;

import java.util.Collections;

/**
 * Bounds the decoder enforces on every frame before it allocates: the largest frame, and for Java-serialized
 * values the object graph depth, array length, number of references, the hashing work of hash-based collections
 * and the allow-list. Immutable.
 */
public final class CodecLimits {

    public static final int DEFAULT_MAX_FRAME_BYTES = 64 << 20;
    public static final int DEFAULT_MAX_DEPTH = 64;
    public static final int DEFAULT_MAX_ARRAY_LENGTH = 16_777_216;
    public static final long DEFAULT_MAX_REFERENCES = 1_000_000;
    /**
     * The most hashing work one value's hash-based collections may cause while the JDK reads it: the sum, over
     * its {@code HashMap}s, {@code HashSet}s, {@code Hashtable}s…, of the objects they hold, counting an object
     * shared by several of them once per path that reaches it (what their {@code hashCode} calls visit). About
     * 4 ms of CPU at this bound on the project's machine ({@code HashWorkBench}: about 7 ns per unit); a value whose
     * collections do not share members costs a few times its object count.
     */
    public static final long DEFAULT_MAX_HASH_WORK = 500_000;

    private final int maxFrameBytes;
    private final int maxDepth;
    private final int maxArrayLength;
    private final long maxReferences;
    private final long maxHashWork;
    private final AllowList allowList;

    public CodecLimits(int maxFrameBytes, int maxDepth, int maxArrayLength, long maxReferences, AllowList allowList) {
        this(maxFrameBytes, maxDepth, maxArrayLength, maxReferences, DEFAULT_MAX_HASH_WORK, allowList);
    }

    public CodecLimits(int maxFrameBytes, int maxDepth, int maxArrayLength, long maxReferences, long maxHashWork,
                       AllowList allowList) {
        this.maxFrameBytes = maxFrameBytes;
        this.maxDepth = maxDepth;
        this.maxArrayLength = maxArrayLength;
        this.maxReferences = maxReferences;
        this.maxHashWork = maxHashWork;
        this.allowList = allowList;
    }

    /** The defaults of {@code NodeConfig}: 64 MiB frames, depth 64, 16 Mi array elements, JDK value types. */
    public static CodecLimits defaults() {
        return new CodecLimits(DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_ARRAY_LENGTH,
                DEFAULT_MAX_REFERENCES, AllowList.withDefaults(Collections.emptyList()));
    }

    public int maxFrameBytes() { return maxFrameBytes; }
    public int maxDepth() { return maxDepth; }
    public int maxArrayLength() { return maxArrayLength; }
    public long maxReferences() { return maxReferences; }
    public long maxHashWork() { return maxHashWork; }
    public AllowList allowList() { return allowList; }
}
