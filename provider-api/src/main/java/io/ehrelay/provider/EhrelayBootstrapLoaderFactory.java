package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.config.BootstrapConfig;
import net.sf.ehcache.bootstrap.BootstrapCacheLoaderFactory;

/** Base of every transport's {@code bootstrapCacheLoaderFactory}: parses the stock bootstrap properties. */
public abstract class EhrelayBootstrapLoaderFactory extends BootstrapCacheLoaderFactory<EhrelayBootstrapLoader> {

    protected abstract String scheme();

    protected abstract String providerFactoryClassName();

    @Override
    public EhrelayBootstrapLoader createBootstrapCacheLoader(Properties properties) {
        return new EhrelayBootstrapLoader(scheme(), providerFactoryClassName(),
                BootstrapConfig.parse(getClass().getSimpleName(), properties));
    }
}
