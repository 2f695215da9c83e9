"""`learn.preprocessing.CategoricalVocabulary`: categories (words) to integer ids, id 0 for the
unknown category, ids given in order of first sight until frozen; `trim` keeps the frequent
ones, renumbered by decreasing frequency (ties in sorted order), as TF 1.x's."""
import collections


class CategoricalVocabulary:
    def __init__(self, unknown_token="<UNK>", support_reverse=True):
        self._unknown_token = unknown_token
        self._mapping = {unknown_token: 0}
        self._support_reverse = support_reverse
        self._reverse_mapping = [unknown_token] if support_reverse else None
        self._freq = collections.defaultdict(int)
        self._freeze = False

    def __len__(self):
        return len(self._mapping)

    def freeze(self, freeze=True):
        """A frozen vocabulary maps every unseen category to 0 instead of adding it."""
        self._freeze = freeze

    def get(self, category):
        if category not in self._mapping:
            if self._freeze:
                return 0
            self._mapping[category] = len(self._mapping)
            if self._support_reverse:
                self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category, count=1):
        """Counts `count` more sightings of `category` (added if new and not frozen)."""
        if self.get(category) <= 0:
            return
        self._freq[category] += count

    def trim(self, min_frequency, max_frequency=-1):
        """Keeps the categories seen more than min_frequency times (and fewer than
        max_frequency, when > 0), renumbered from 1 by decreasing frequency."""
        ranked = sorted(sorted(self._freq.items(), key=lambda kv: (isinstance(kv[0], str),
                                                                   kv[0])),
                        key=lambda kv: kv[1], reverse=True)
        self._mapping = {self._unknown_token: 0}
        if self._support_reverse:
            self._reverse_mapping = [self._unknown_token]
        kept = {}
        for category, count in ranked:
            if 0 < max_frequency <= count:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = len(self._mapping)
            kept[category] = count
            if self._support_reverse:
                self._reverse_mapping.append(category)
        self._freq = collections.defaultdict(int, kept)

    def reverse(self, class_id):
        """The category of `class_id`."""
        if not self._support_reverse:
            raise ValueError("This vocabulary wasn't initialized with support_reverse to "
                             "support reverse() function.")
        return self._reverse_mapping[class_id]
