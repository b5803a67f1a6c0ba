package io.ehrelay.internal.codec;

/** Told each class Java serialization writes while a key or value is encoded (see {@link ValueCodec#write}). */
@FunctionalInterface
public interface ClassWatch {

    /** {@code type} is part of the value being written; called on the writing thread, once per value and class. */
    void written(Class<?> type);
}
