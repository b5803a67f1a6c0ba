package io.ehrelay.codec;

/**
 * Bounds the decoder enforces on every frame before it allocates: the largest frame, and for Java-serialized
 * values the object graph depth, array length, number of references and the allow-list. Immutable.
 */
public final class CodecLimits {

    private final int maxFrameBytes;
    private final int maxDepth;
    private final int maxArrayLength;
    private final long maxReferences;
    private final AllowList allowList;

    public CodecLimits(int maxFrameBytes, int maxDepth, int maxArrayLength, long maxReferences, AllowList allowList) {
        this.maxFrameBytes = maxFrameBytes;
        this.maxDepth = maxDepth;
        this.maxArrayLength = maxArrayLength;
        this.maxReferences = maxReferences;
        this.allowList = allowList;
    }

    /** The defaults of {@code NodeConfig}: 64 MiB frames, depth 64, 16 Mi array elements, JDK value types. */
    public static CodecLimits defaults() {
        return new CodecLimits(64 << 20, 64, 16_777_216, 1_000_000, AllowList.withDefaults(java.util.List.of()));
    }

    public int maxFrameBytes() { return maxFrameBytes; }
    public int maxDepth() { return maxDepth; }
    public int maxArrayLength() { return maxArrayLength; }
    public long maxReferences() { return maxReferences; }
    public AllowList allowList() { return allowList; }
}
