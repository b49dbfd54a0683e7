"""The preset dictionary stored pages are compressed against (schema v8 pages with the
``PAGE_BLOB_DICT`` mark, ``core.store.models.pack_page``).

A page is one to four kilobytes of text: deflate alone finds few repeats in so little and
packs English prose about 2 : 1. A dictionary of common English words, the most frequent
last (deflate codes near matches in fewer bits), gives it matches from the first word on:
the 16 MiB-of-XHTML EPUB's pages take 8.34 MB instead of 9.64 MB (tests/bench/bench_dbsize.py).

The words are the 1,228 most frequent words of a public-domain novel (Kafka's *Metamorphosis*,
Project Gutenberg), its names left out: a list of common words, not the book's text.
NEVER CHANGE THIS TEXT: stored pages can only be read with the very bytes they were packed
against. A better dictionary needs a new mark byte, with this one kept for old rows.
"""

WORDS = """
tightly swing climb curious insistent sir eight staying haven attack forgetting allow grant
intended secure nor stubbornness true failure showing am request behalf unheard fail yourself
worried sacked excuse abandoning danger cry Can fortunately unwell stubborn ourselves hanging
fretsaw relaxation week believe continued boots polished reply rubbed innocent enquiries couple
Why visitor froze ten Despite swang load method task Before real breathing fog direct remind
sacrifice whatever price miracle sensitive gather imagine bend moreover blow covers matter
conclusions acquired beg whispered putting fist members wooden thank circumstances explain
painful cautious hungrier claim accept son accuse yet service reported assistant mad slept rung
Had First definitely hearing breakfasts house instance Other stupid itch worries curse takes
chosen pane hitting weather dull fitted frame salesman familiar dream size thin dreams woke
START Most file follow restrictions parts information limitation written ANY FOR LIMITED
defective replacement payments applicable provided user official paragraphs links creating
performing entity obtain mission THIS derivative complying royalties means letters daughter
protect Father damages neck young hallway page played smiled hurry beards play chairs
indicating clean alone dust whom absolutely contrary current movements cap buttons gold
standing mean death shaking screamed chase changed worn admit insist thrown dare entertaining
letting visit improvement carrying easier experienced clothes child sofa strain closer nodded
interest available repeated pull continue conservatory fond warm costs earned success despair
misfortune receipt ate delay directly news midday eaten second finger liked comfortable cheese
bare realise Would watched test opportunity greatest hunger regret nonetheless uneasy toe enter
normally smell beginning feeling heavily shove fast distance hissing appeals picked relatively
fled coffee sake outstretched Hardly landed understood persuade convinced waiting sudden secret
shoulders partly usually remember large line grey hair occupied double flowed damage Once
Perhaps contrast By calmly read Maybe suffer shocking waste giving appear employer causing
behaviour suitable intention crying silence explaining paper town wants From upset Was spend
firm caught raise bound main falling ask total lightly narrow bringing watching afraid injured
occurred weight managed stretch directions broad simple remembered consider Only opening
knocking yes properly mixed inside deep knock apart company suspicious extremely understanding
report anger avoid lively particularly deeply big six debt ago spot sitting salesmen makes slid
cold lift bad top rolled However How sad rain showed samples A peacefully proper stiff belly
horrible date whatsoever cost states volunteers website requirements providing fees posted
distributed status owner format compliance support displaying phrase To copying editions rid
equipment rented corner briefly bedroom friends pockets coat public arrived broke Come Her
shall stepped high unless appearance keeping lot decided return fetch receive dinner becoming
breathe month brought feet rather anxiously bear spent remain empty waited darkness crawled
dark obviously further tip merely drive newspaper self backwards talk mood save stretched
started removed respect exactly number movement wide break paying lack teeth situation skirts
locksmith entrance animal Mother sent alright learn cause wish seem astonished happening worry
amazed working evenings isn fallen annoyed highly decision After smile difficulty call careful
mind strong concern entire confidence view pushing hit direction trying itself control those
push today sensible thoughts disturbed answered Do gently saying answer somewhere somebody
entirely catch forwards talking best maybe ought live touched drew slight contact bit arm heavy
raising hat fur lady hung above four ready brown recently check online included world anywhere
medium donate distribute gentleman appeared sit All form apple shouted immobile With freely
coming slow silent within indeed send broom asleep startled carried surprise forced sometimes
milk filled slammed intentions allowed stop pulled stick spare urge enormous below wall On
reading important along disappeared holding loudly listen wait nobody Just beside cannot late
immediate speaking seriously glad idea stayed anyway show necessary employees steps someone
locked patient happen raised consideration harder followed learned throw remove sides short
explanation shocked usual fact rush Yes quietly change hope Well gone during overcome friendly
Oh wouldn threw cut human wasn Please country tax Information comply distribution OR YOU charge
license protected meant sheet bent either crawling flew running forgotten lost rushed foot
impossible particular earn landing meal efforts start listening gave year person sure please
has find carpet street unfortunately air easily painfully slightest caused lying habit instead
aware getting leaving struck wrong fresh quarter past alarm pay sort tell try whenever early
sleeping unable forget picture small many lifted THE associated copies distributing holder paid
crawl tired totally music received dish actually ceiling light fully end pleasure future
reached chance ground leant breath following hold kind hall sight knowing strength No simply
why question sound across When expected calm order earlier turning difficult serious breakfast
individual conversation outside near hurriedly doctor ill man office o five given white lower
nice travelling spread collection walls between rest One located refund fee including law S
writing agree stand closed doorway finished our mouth lock hurried easy condition job else
speak We hours knew needed maid loud kept carry force sign bring peace however both need having
noise seven half years another fall eating different position couldn slightly cleaner charwoman
permission everyone such going uniform several taking realised tears since suddenly nearly far
despite others fell dressed word carefully noticed As completely drawers together desk told For
place people train ve stopped shut present covered upright org www paragraph access days
looking provide turn great In quiet clearly finally themselves night doors whether There notice
didn own moment OF laws License eat key ran clear kitchen leave least remained moved stay last
part free At want later moving thing boss quickly making pain using donations middle violin
until take few reason us every forth forward don done words ever clock close d saw pushed
effort tried hard towards trademark playing understand Now seen keep arms certainly especially
doing hardly copy anyone old face pressed attention stood held hear Then So called put chest
life food sleep sat re give taken behind new became perhaps anything m probably furniture That
once these felt times happened What found will may women chair asked immediately opened course
move nothing often money business state most States agreement couch front also help same might
full voice should although me herself living straight evening good say took each next possible
ll know began always longer whole This here hands become home eyes feel heard window turned
table off lay around flat set think my enough better never legs You almost through got onto
right its terms use E hand They floor side long slowly because look morning really used able
under already body gentlemen your copyright She three round two being parents make His seemed
electronic things well something against wanted let day must come everything looked bed how
though And soon quite too are came left family went over But can thought If works very after we
open down who an away clerk chief head like again some much before while go made see which
where first It still get just without little is said do than time other only what t when The
way them were their one then did more about work no now into even any by back up so mother He
door himself I if there father sister been you or have out could this room from be they but all
on at she for her would him s not with as a that it had in was he his of and to the
"""

PAGE_DICT = " ".join(WORDS.split()).encode("ascii")
