"""Function words the lexical leg ignores in a query (Russian and English).

They carry no topic, yet in a small collection BM25 still rewards them: "how to bake bread"
would rank every English note that says "how to" above the Russian note on bread. Notes keep
them in the index (BM25 statistics stay honest); only the query side drops them, and a query
made of nothing else keeps them.
"""

EN = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves many much also did does done get got may might must shall
""".split()
)

RU = frozenset(
    """
а без более бы был была были было быть в вам вас весь во вот все всего всех вы где да даже для до
его ее её если есть еще ещё же за здесь и из или им их к как какая какие каким какой каком какую
когда кто ли либо мне много может можно мы на над надо наш не него нее неё нет ни них но ну о об
однако он она они оно от очень по под при про с сам свой себя со так также такой там те тем то того
тоже той только том ты у уже хотя чего чей чем что чтобы чье чья эта эти это этого этой этом этот
я сколько почему зачем который которая которое которые которых котором каков какова каково
""".split()
)

ALL = EN | RU
