package io.ehrelay.frameworks;

import net.sf.ehcache.CacheManager;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.ehcache.EhCacheCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The Spring application: {@code EhCacheCacheManager} over the node's (singleton) Ehcache CacheManager. */
@Configuration
@EnableCaching
public class SpringConfig {

    /** The shared database, set by {@link FrameworkNode} before the context starts. */
    static volatile String jdbcUrl;

    @Bean
    public org.springframework.cache.CacheManager cacheManager() {
        return new EhCacheCacheManager(CacheManager.getInstance());
    }

    @Bean
    public GreetingService greetingService() {
        return new GreetingService(jdbcUrl);
    }
}
