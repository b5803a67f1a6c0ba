package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.internal.Dependencies;
import io.ehrelay.internal.config.BootstrapConfig;
import io.ehrelay.internal.config.MixedFactories;
import net.sf.ehcache.bootstrap.BootstrapCacheLoaderFactory;

/** Base of every transport's {@code bootstrapCacheLoaderFactory}: parses the stock bootstrap properties. */
public abstract class EhrelayBootstrapLoaderFactory extends BootstrapCacheLoaderFactory<EhrelayBootstrapLoader> {

    private final String scheme;
    private final String providerFactoryClassName;

    /** @see EhrelayReplicatorFactory#EhrelayReplicatorFactory(String, String) */
    protected EhrelayBootstrapLoaderFactory(String scheme, String providerFactoryClassName) {
        this.scheme = scheme;
        this.providerFactoryClassName = providerFactoryClassName;
    }

    @Override
    public EhrelayBootstrapLoader createBootstrapCacheLoader(Properties properties) {
        Dependencies.check();
        MixedFactories.checkConstructing();
        return new EhrelayBootstrapLoader(scheme, providerFactoryClassName,
                BootstrapConfig.parse(getClass().getSimpleName(), properties));
    }
}
