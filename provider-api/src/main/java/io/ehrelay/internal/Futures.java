package io.ehrelay.internal;

import java.util.concurrent.CompletableFuture;

/**
 * Small future helpers that Java 8 lacks ({@code CompletableFuture.failedFuture} is Java 9). Internal: not part
 * of ehrelay's API, may change in any release.
 */
public final class Futures {

    private Futures() {
    }

    /** A future already completed exceptionally with {@code cause}. */
    public static <T> CompletableFuture<T> failed(Throwable cause) {
        CompletableFuture<T> f = new CompletableFuture<>();
        f.completeExceptionally(cause);
        return f;
    }
}
