/** ehrelay's own helpers, shared by its modules: not an API, may change in any release. */
package io.ehrelay.internal;
