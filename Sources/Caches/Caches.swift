// LRU memory and disk caches, file and object arrays and the cache cleaner (API.md "LRUMemoryCache"
// to "PurgeablePath and CacheCleaner"). They sit on Preferences' DataCenter and CustomStorage.
import Preferences
