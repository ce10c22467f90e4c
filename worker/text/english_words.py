"""English words for telling names from ordinary words (worker.text.names), counted on the English
sides of the bundles' training corpora (Tatoeba, WMT news, software strings, Multi30k):

- ``COMMON``: words written in lower case at least 5 times, and at least as often as capitalised
  after a sentence's first word ("apply", "office", "windows"): capitalised at a sentence's start,
  or in the middle ("the President"), they are not taken for names.
- ``TRANSLATED``: words capitalised after a sentence's first word at least 5 times whose German
  side holds the same word in fewer than half of the pairs ("Monday", "German", "Munich", "Mary"):
  the translation carries a German form, so they are never restored.

Written by ``python -m worker.text.names OUT.py CORPUS_PREFIX...`` (each prefix with .en.gz and .de.gz).
"""
COMMON = frozenset("""
a abandon abandoned abbreviated abbreviation abbreviations abdomen abducted abductors abilities ability able
abnormal abnormally aboard abolish abolished abort aborted aborting abortions about above abroad abrupt
absence absent absolute absolutely absorb absorbed abstract absurd abuse abused abuses academic academics
accelerate accelerated accelerates acceleration accelerator accelerators accent accept acceptable accepted
accepting accepts access accessed accessibility accessible accessing accessories accident accidental
accidentally accidents accommodate accommodated accommodation accompanied accompanies accompany accompanying
accomplice accomplish accomplished accord accordance according accordingly accordion account accountable
accounting accounts accumulate accumulated accuracy accurate accusation accusations accuse accused accuses
accusing accustomed ache aches achieve achieved achievement achievements achieving acid acknowledge
acknowledged acknowledges acoustic acquaintance acquaintances acquainted acquire acquired acquiring
acquisition acquitted acrobatic acrobatics acronym across act acted acting action actions activatable activate
activated activation active actively activism activist activists activities activity actor actors actress acts
actual actually acute ad adapt adapted adaptive adapts add added addict addicted addiction adding addition
additional additionally addr address addressed addresses addressing adds adequate adhere adhesive adjacent
adjourned adjust adjusted adjusting adjustment adjustments adjusts admin admindir administration
administrations administrative administrator admirable admire admired admiring admission admit admits admitted
admittedly admitting adopt adopted adoption adorable adores adorned ads adult adultery adults advance advanced
advances advantage advantages adventure adventurous adversity advertised advertisement advertisements
advertising advice advise advised adviser advisers advises advisor advisory advocated advocates affair affairs
affect affected affecting affection affectionately affects affirmed affirms affix afford affordable
aforementioned afraid after aftermath afternoon afternoons afterwards again against age aged agencies agency
agenda agent agents ages aggregate aggregates aggression aggressive aggressively aging agitated ago agree
agreed agreeing agreement agreements agrees agricultural agriculture ahead aid aide aides aiding ailing aim
aimed aiming aims ain't air airborne aircraft aircrafts aired airline airlines airmail airplane airplanes
airport airports airtight aisle aka al alarm alarmed alarming albeit album albums alcohol alcoholic alert
algorithm algorithms alias aliases alibi alien aliens alight align aligned alignment alike alive all all-
around allegations alleged allegedly alleges allergic allergies alley alleyway alliance allies allocate
allocated allocating allocation allow allow-empty allowance allowances allowed allowing allows alluding ally
almost alone along alongside aloud alpha alphabet alphabetically alphanumeric already also alter alternate
alternates alternative alternatives although altitude altogether aluminum always am amateur amazed amazing
ambassador ambassadors ambidextrous ambiguous ambition ambitions ambitious ambulance amend amended amendment
amendments amends amid amidst ammunition among amongst amount amounted amounting amounts amp amputated amused
amusement amusing an analyse analysed analysis analyst analysts analyze analyzed ancestor ancestors anchor
ancient and anesthesiologist angel anger angle angles angrily angry animal animals animated animation anime
ankle ankles anniversary annotated announce announced announcement announcer announces announcing annoy
annoyed annoying annoys annual annually anonymity anonymous another another's answer answered answering
answers anthem anti-doping anti-globalisation antialiasing antibiotics anticipate anticipated anticipates
antidote antique antiques ants anvil anxiety anxious any anybody anybody's anycompatible anymore anyone
anything anytime anyway anywhere apart apartment apartments apologize apologized apologizing apology app
appalled apparatus apparel apparent apparently appeal appealed appealing appeals appear appearance appearances
appeared appearing appears append appending appetite applauded applause apple apples applicable applicants
application applications applied applies apply applying appoint appointed appointment appointments apport
appreciate appreciated appreciates appreciation approach approached approaches approaching appropriate
approval approve approved approximately apps apron aprons apt apt-cache apt-get apt-mark aptitude aqua
aquarium ar arbitration arcade arch arch-indep arch-specific archaeological archer architect architects
architectural architecture architectures archive archived archiver archives archiving archway are area areas
aren't arena arg args argue argued argues arguing argument arguments arise arisen arises arising arithmetic
arm armchair armed armor armored armoured arms army arose around aroused arp arrange arranged arrangement
arrangements array arrays arrest arrested arresting arrests arrival arrivals arrive arrived arrives arriving
arrogance arrogant arrow arrows arsenic art article articles artifact artificial artist artist's artistic
artists arts artwork as asbestos ascending ascii ashamed ashes ashtray aside ask asked asking asks asleep
aspect aspects asphalt aspirations aspirin assault assaults assemble assembled assembly assert assertion
asserts assess assessed assessing assessment assessments asset assets assign assigned assignment assignments
assist assistance assistant assistants assisted assisting assists associate associated association
associations associative assume assumed assumes assuming assumption assurance assure assured assures asthma
astonished astonishment astral astronaut astronauts asylum at ate atheist athlete athletes athletic athletics
atmosphere atom atomic atop attach attached attaching attachment attack attacked attacker attacking attacks
attempt attempted attempting attempts attend attendance attendant attended attending attention attentive
attentively attic attire attitude attorney attorneys attr attract attracted attracting attraction attractions
attractive attracts attribute attributed attributes auction auctions audience audiences audio audit audit-log-
result auditorium aunt aunt's austerity authentic authenticated authentication author authorities authority
authorization authorized authors auto automated automatic automatically automobile automobiles automotive
autonomy autovacuum autumn auxiliary availability available avenues average averaged averaging avg avoid
avoidance avoided avoiding await awaited awaiting awaits awake award awarded awards aware awareness away awe
awesome awful awfully awk awkward awoke ax axe axis b babies baby babysit babysitter babysitting bachelor back
backdrop backed backend background backgrounds backhoe backing backlit backpack backpacks backs backseat
backslash backspace backstroke backup backups backward backwards backyard bacon bacteria bad badge badly
badminton baffled bag bagel baggage bagpipes bags bail bailout bake baked bakery bakes baking balance balanced
balances balancing balconies balcony bald balding ball ballads ballerina ballet balloon balloons ballot
ballpark ballpoint balls bamboo ban banana bananas band bandage bandaged bandanna bands bang banged banging
banished banjo bank bank's banker bankers banking bankrupt bankruptcy banks banned banner banners banning
banquet bans baptized bar barbecue barbecuing barber barber's bare barefoot barefooted barely bargain bark
barked barking barks barn barrel barrels barren barrier barriers bars bartender base base64 baseball based
baseman basement bases bash basic basically basics basis basket basketball baskets bass bassist bat batch bath
bathing bathrobe bathroom baths bathtub batman baton batons bats batsman batter battered batteries battery
batting battle battles battling be beach beaches beads beam beams bean beanie beans bear beard bearded beards
bearer bearing bears beat beaten beating beats beautiful beautifully beauty became because become becomes
becoming bed bed-space bedroom bedrooms beds bedside bedtime bee beef been beep beer beers bees before
beforehand beg began beggar begged begging begin beginner beginners beginning begins begun behalf behave
behaved behaves behaving behavior behaviour behind beige being beings belief believe believed believes
believing bell bells belly belong belonged belonging belongings belongs beloved below belt belts bench benches
benchmark bend bending bends beneath beneficial benefit benefited benefits bent beret beside besides best bet
betray betrayal betrayed bets better between bevel beverage beverages beyond biased bib bicycle bicycles
bicycling bicyclist bicyclists bid bidding bids big bigger biggest bigint bike biker bikers bikes biking
bikini bikinis bilateral bilingual bill billboard billion billionaire billions bills bin binaries binary
binary-only bind binding bindings binoculars bins biography biological biologist biology bipartisan bird birds
birth birthday births biscuits bisect bisect--helper bisecting bit bite bites biting bitmap bitrate bits
bitten bitter bitwise bizarre black black-haired blackboard blacked blackmail blackmailed blade blades blame
blamed blames blaming blank blanket blankets blanks blast blazer bleachers bleed bleeding blender blessed
blessing blew blind blinded blindfolded blinds blink blinked blinking blob blobs block block-size blocked
blockers blocking blocks blog blogger blond blond-hair blond-haired blonde blondes blood bloodshed bloody
bloom blossoms blouse blow blower blowing blown blows blue blue-green blues bluff bluffing blunt blurred
blurry blush blushed blushing bmx bn board boarded boarding boards boardwalk boast boasts boat boats bodies
body body's bodyguard bodysuit bogus boil boiled boiling boils bold bomb bombed bomber bombing bombs bond
bonds bone bones bongo bonus bonuses boogie book book's bookcase booked booking bookings bookmark bookmarks
books bookshelf bookstore bookstores bool boolean boom boost boosted boot booth booths boots bootstrap border
borders bore bored bores boring born borrow borrowed borrowing boss bossy both bother bothered bothering
bothers bottle bottles bottom bottoms bought boulder bounced bouncer bounces bouncing bouncy bound boundaries
boundary bounding bounds bouquet bout bow bowed bowl bowling bowls bows bowtie box boxer boxers boxes boxing
boy boy's boycott boyfriend boys bra brace bracelet braces bracket braided brain brains brake brakes braking
branch branches brand branded brands brandy brass brat brave bravely braver bravery breach bread break
breakdancing breakdown breakfast breaking breakpoint breakpoints breaks breakthrough breast breaststroke
breath breathe breathed breathing breed bribe bribes brick bricks bride bride's bridesmaids bridge bridges
brief briefcase briefing briefly brigade bright brighter brightest brightly brightness brilliant bring
bringing brings brink broad broadcast broadcaster broadcasters broadcasting broadcasts broader broadly
broccoli brochure broke broken broker bronco bronze broom brooms brother brother's brothers brought brow brown
brown-haired browse browser browsing brunette brush brushed brushes brushing brutal brutality bsd btree bubble
bubbles bucket buckets bucking bucks bud budget budgetary budgets buffer buffering buffers buffet bug buggy
bugs build buildinfo building buildings builds built built-in builtin builtins bulb bulbs bulk bull bulldozer
bullet bullets bullied bully bumped bumper bunch bundle bundled bundles bunny buoy burden burger burglar
burgundy buried burn burned burning burns burnt burst bursts bury burying bus buses bushes bushy busier
business businesses businessman businessmen busy but butcher butt butter butterflies butterfly button button-
up buttons buy buyer buyers buying buys buzz by bygones bypass bypassed bystander bystanders byte bytes bzip-
compressed bzip2 bzr c ca cab cabin cabinet cable cables cache cached caches cafe cafeteria caffeine café cage
cages cake cakes calculate calculated calculating calculation calculations calculator calendar calf call
callback called caller calling calls calm calmed calmly calories came camel camels camera camera's cameraman
cameras camouflage camp campaign campaigners campaigns camped camper campers campfire camping camps campsite
campus can can't canal cancel canceled canceling cancellations cancelled cancer candid candidate candidates
candidature candle candlelight candles candy cane canned cannon cannot canoe canoes canonical canonicalize
canonicalizing canopy cans canvas canyon cap capabilities capability capable capacity cape capital capitals
caps captain captain's caption captors capture captured car car's carbon carbon-14 card cardboard cardigan
cards care cared career careers careful carefully careless carelessness cares caret cargo caricature caring
carnival carousel carpenter carpet carpeted carpets carriage carried carrier carries carrots carry carrying
cars cart cartoon cartoons carts cartwheel carve carved carving case cases cash cashier casino cast casting
castle castles casts casual casually casualties cat cat's cat-file catalog catalogs catalogue catastrophe
catastrophic catch catcher catches catching categories category catering cathedral cathedral's cats cattle
caught cause caused causes causing caution cautious cavalry cave cc ccache cd cease ceiling ceilings celebrate
celebrated celebrates celebrating celebration celebrations celebrities celebrity cell cellar cello cellphone
cellphones cells cement cemetery cent center centered centers centimeters centimetres centre centres cents
centuries century cereal cerebral ceremonial ceremony cert certain certainly certainty certificate
certificate's certificates certification certified chain chained chains chainsaw chair chaired chairman
chairperson chairs chairwoman chalk chalkboard challenge challenged challenges challenging chambers champagne
champion chance chances change change_password changed changelog changelog-file changelog-format changes
changing channel channels chaos chaotic chapter chapters char character characteristic characteristics
characters charge charged charges charging charisma charity charm charmap charming chars charset chart charter
chase chased chases chasing chat chatting chauffeur chdir cheap cheaper cheapest cheat cheated cheating cheats
check checked checkered checkers checking checkout checkpoint checkpoint's checkpoints checks checksum
checksums cheek cheeks cheer cheered cheerful cheering cheerleader cheerleaders cheerleading cheers cheese
cheesecake chef chef's chefs chemical chemicals chemistry chemotherapy cherry cherry-pick chess chest
chestnuts chew chewing chicken chickens chief chiefly child child's childhood childish children children's
chill chilly chimney chip chips chmod chocolate chocolates choice choices choir choirs choked choose chooser
chooses choosing chop chopped chopping chopsticks chores chose chosen chronic chroot chubby chunk chunks
church churches cigar cigarette cigarettes cinema cinemas cipher circle circles circuit circuits circular
circulation circumstances circus cited cities citing citizen citizens citizenship city city's city-planning
cityscape civic civil civilian civilians civilization civilized clad claim claimants claimed claiming claims
clandestine clap clapped clapping clarification clarified clarifies clarify clarinet clarity clash clashed
clashes class classes classic classical classics classification classified classify classmate classmates
classroom clause clauses clay clean cleaned cleaner cleaners cleaning cleanliness cleanly cleans cleanup clear
cleared clearer clearing clearly clenched clerics clerk clever click clicked clicking clicks client client-
side clientcert clients cliff climate climatic climb climbed climber climbers climbing climbs clinic clinical
clinics clip clipboard clips clock clocks clone cloned clones cloning close closed closely closer closes
closest closet closeup closing closure cloth clothed clothes clothesline clothing cloths cloud clouds cloudy
clown clowns club club's clubs clue cluster cluster's clustered clustering clusters clutch clutching cluttered
cm cmd co-author co-founder coach coaches coaching coal coalition coast coastal coaster coat coats cobalt
cobblestone cocaine cockroaches cocktail coconut code codec coded codes coffee coin coincide coincidence coins
coke cold colder coldest colds collaborate collaborated collaboration collapse collapsed collapsing collar
collared collating collation collations colleague colleagues collect collected collecting collection
collective collectively collector collects college colleges collided collie collision collisions collusion
colon colon-separated colonel colonial colony color colored colorful colorfully coloring colormap colors
colour colourful colours column columns com coma comb combat combination combine combined combining combo come
comeback comedian comedy comes comfort comfortable comfortably comforting comforts comic comics coming comma
comma-separated command command-line commanded commander commanders commando commands commas commemorate
comment commentary commented commenting comments commerce commercial commissioned commissioners commissions
commit commit-graph commit-tree commitment commitments commits committed committee committees committer
committing commodities commodity common commonly commune communicate communicated communicating communication
communications communist communities community commuter compact companies companion companions company
company's comparable compare compared comparing comparison comparisons compartment compass compatibility
compatible compelled compensate compensation compete competent competes competing competition competitions
competitive competitor competitors compilation compiled compiler compl complain complained complaining
complains complaint complaints complement complemented complete completed completely completing completion
complex complexion compliance compliant complicate complicated complications complicity complied compliment
compliments comply component components compose composed composer composite composition compound compounds
comprehensive compress compressed compression compressor compromise compromised compulsory compute computed
computer computers computing concatenation conceal concealed concede conceited concentrate concentrated
concentrates concentrating concentration concept concepts concern concerned concerning concerns concert
concerts concession conclude concluded concludes conclusion conclusions concrete concurrent concurrently
condemn condemned condition conditional conditioner conditioning conditions condolences condominium condone
conduct conducted conducting conductor cone cones conf conference conferences confess confessed confession
confetti conffile conffiles confide confidence confident confidential confidentiality config config-file
configuration configurations configure configured configuring confirm confirmation confirmed confirms
confiscated conflict conflicting conflicts confront confronted confuse confused confusing confusion
congratulate congratulated congregate congressional congressman conjunction connect connected connecting
connection connections connectivity connects conquer cons conscience conscious consciousness consecutive
consensus consent consequence consequences consequently conservation conservative conservatives consider
considerable considerably considerate consideration considerations considered considering considers consist
consistency consistent consistently consisting consists console consoled consortia consortium conspiracy
constant constantly constituency constitutes constitution constitutional constraint constraints construct
constructed constructing construction constructive constructors constructs consult consultancy consultant
consultants consultation consultations consulted consulting consume consumed consumer consumers consumes
consumption contact contacted contactless contacts contagion contagious contain contained container containers
containing contains contaminated contemplating contemporary contempt content contented contentious contents
contest contested contests context contiguous continent continents contingent continuation continue continued
continues continuing continuous continuously contract contractor contracts contradicted contradicts
contraption contrary contrast contrecord contribute contributed contributing contribution contributions
control control-file controlled controlling controls controversial controversies controversy convenience
convenient convening convention conventional conventions conversation conversations converse conversing
conversion conversions convert converted convertible converting convey convicted conviction convictions
convince convinced convincing cook cooked cooker cookie cookies cooking cooks cool cooler coolers cooling
cooperate cooperating cooperation coordinate coordinated coordination coordinator cop cope copied copies
coping copper cops copy copy_data copying copyright cord cordoned cords core cork corn corner corners corporal
corporate corporation corporations corpse correct corrected correcting correction corrections correctly
correspond correspondence correspondent corresponding corresponds corridor corrupt corrupted corruption cortex
cost cost-cutting costing costly costs costume costumes cottage cotton couch cough coughed coughing could
could've couldn't council count counted counter counterfeit counterpart counterparts counters counting
countless countries country country's countryside counts coup couple couples coupon coupons courage courageous
course courses court court's courteous courtroom courts courtyard cousin cousins cover coverage covered
covering covers cow coward cowards cowboy cowboys cowgirl cows cozy cpu crab crack cracked cradle cradles
craft crafting crafts craftsman cramped crane crash crashed crashes crashing crate crates crawl crawled
crawling crawls crayons crazy cream creams create create-slot created creates creating creation creative
creativity creature creatures credential credentials credibility credible credit credit-card creditors credits
creek creeps creepy cremated crept crest crew crews crib cricket cricketer cried cries crime crimes criminal
criminals crises crisis criteria criterion critic critical criticise criticised criticising criticism
criticisms criticize criticized criticizing critics crocodile crontab crop crops cross cross-legged
crosscountry crossed crosses crosshairs crossing crosstabview crosswalk crouched crouches crouching crow
crowbar crowd crowded crowding crowds crown crowned crowns crows crucial crude cruel cruft cruise crush
crushed crutches cry crying crypt crypto crystal ctime cubic cubicle cucumber cuisine culinary cult cultivated
cultural culture cultures cumulative cup cupboard cupcake cupcakes cups curb cure cured curfew curiosity
curious curly curly-haired currency current currently currents curriculum curry curse cursed cursor cursors
curtain curtains curve curved curves custody custom custom-made customary customer customers customs cut cute
cutest cuts cutting cycle cycles cycling cyclist cyclists cynical cz d da dad dad's daemon daily dairy dam
damage damaged damages damaging damp dance danced dancer dancers dances dancing danger dangerous dangerously
dangers dangling dare dared dares dark dark-haired dark-skinned darkened darker darkness darts dash dashed
data data-modifying data-only database database's database-wide databases date dated dates datetime dating
daughter daughter's daughters dawn day day's day-to-day daydreaming daylight days daytime db db_args dbname de
dead deadline deadlines deadlock deadly deaf deafening deal dealer dealership dealing deals dealt dear death
deaths deb debate debated debates debating debian debris debt debts debug debugger debugging debut decade
decades deceased deceive deceived deceiving decency decent deception decide decided decides deciding decimal
decision decision-making decisions decisive deck declaration declarations declare declared declares declaring
decline declined declining decode decoding decompress decompression decorate decorated decorating decoration
decorations decorative decrease decreased decreasing decree decrypt decryption dedicated deemed deep deepen
deeper deepest deeply deer def default defaulting defaults defeat defeated defeats defect defects defence
defend defendant defendants defended defender defenders defending defends defense defenseless defensive
deferrable deferred deficit deficits define defined defines defining definite definitely definition
definitions definitive deflate defuse degree degrees del delay delayed delaying delays delegates delegation
delete deleted deletes deleting deletion deli deliberate deliberately delicate delicious delight delighted
delimited delimiter delimiters deliver delivered deliveries delivering delivers delivery delta demand demanded
demanding demands democracy demographic demolished demolition demonstrate demonstrated demonstrates
demonstrating demonstration demonstrations demonstrators denial denied denies denim denounced dense density
dental dentist dentist's deny denying departed departing department departments departure depend dependable
dependencies dependency dependent depending depends depicting depictions deployed deported deposit deposited
deposits depot deprecated depressed depressing depression deprived depth depths deputies deputy der derby
dereference derived derives derogatory des descend descending descent describe described describes describing
description descriptions descriptor descriptors desecration desert deserted deserve deserved deserves design
designated designed designer designers designing designs desirable desire desired desk desks desktop desktop-
entry desolate desperate desperately desperation despise despised despite dessert destination destinations
destined destiny destroy destroyed destroying destruction detach detached detail detailed details detained
detect detected detection detective detectives detects detention deteriorated deterioration determination
determine determined determines determining dev devastated devastating develop developed developer developers
developing development developments develops device devices devil devoted df di diabetes diabetic diagnose
diagnosed diagnosis diagnostic diagnostics dial dialed dialog dialogue diameter diamond diamonds diary dice
dictated dictates dictator dictionaries dictionary did didn't didn’t die died dies diesel diet dieting diff
differ difference differences different differently differing differs difficult difficulties difficulty diffs
diffstat dig digest digger digging digit digital digits dignified dignity digs dilapidated dim dime dimension
dimensions dimly dine diner dining dinner dinners dinosaur dinosaurs dioxide diploma diplomacy diplomat
diplomatic diplomats dipped dipping dir direct directed directing direction directions directive directives
directly director directorate directories directors directory directs dirmngr dirs dirstat dirt dirty disable
disabled disables disabling disadvantage disadvantages disagree disagreed disagreement disallow disallowed
disappear disappearance disappeared disappoint disappointed disappointing disappointment disassembler disaster
disasters disbelief disc discard discarded discharge discharged disciplinary discipline disclose disclosed
disco disconnected discontent discount discounts discouraged discourse discover discovered discovering
discovery discreet discrimination discriminatory discuss discussed discussing discussion discussions disease
diseases disgraceful disguised disgust disgusted disgusting dish dishes dishonest dishonored dishwasher disk
dislike dislikes dislocated dismantled dismissed disobeyed disorder disorders displacement display displayed
displaying displays disposal disposed dispute disputed disputes disquiet disrupt disruption dissatisfied
dissidents dissolution distance distances distant distinct distinguish distorted distract distracted distress
distressed distribute distributed distributing distribution distributor district district's districts disturb
disturbed disturbing ditch ditched ditto dive diver divers diverse diversion diversions diversity divert
diverted dives divide divided dividend diving division divisions divorce divorced dizzy dll do dock doctor
doctor's doctorate doctors document documentary documentation documented documents does doesn't doesn’t dog
dog's doghouse dogs doing doll dollar dollars dolls dolphin domain domainname domains domestic dominance
dominant dominate dominated dominates dominoes don't donate donated donating donation donations done donkey
donkeys donors don’t doomed door doorbell doors doorstep doorway doping dorm dose dot dots dotted double
doubled doubles doubt doubted doubtful doubts dough down downgraded downhill download downloaded downloading
downpour downright downs downstairs downstream downtown downturn downward downwards dozed dozen dozens dpkg
dpkg-deb dpkg-source draft drafted drag dragged dragging dragon drain drama dramatic dramatically drank draped
drastic draw drawer drawers drawing drawings drawn draws dreadful dreadlocks dream dreamed dreaming dreams
drenched dress dressed dresses dressing drew dribbles dribbling dried drifts drill drilling drink drinking
drinks drive driven driver driver's drivers drives driveway driving drop dropdown dropped dropping drops
drought drove drowned drowning drug drugs drugstore drum drummer drums drunk drunken dry dry-run dryer drying
dsc dselect dsp du dual dubbed dubious duck ducking ducks due duel dug dull dumb dump dumpdir dumped dumping
dumps dumpster dune dunk dunking duo dup duplicate duplicated duplicates durable duration during dusk dust
dusty duties duty dwell dwelling dwellings dye dyed dyeing dying dynamic dynamically dynamics départements e
e-cigarettes e-mail e-sport each eager eagerly eagle ear earlier earliest early earn earned earning earnings
earns earphones earring earrings ears earth earthquake earthquakes ease easel easier easiest easily easing
easy easygoing eat eaten eater eating eats echo eclipse ecological economic economical economically economics
economies economist economists economy ed edge edges edit edit-todo edited editing edition editions editor
editor-in-chief editorial editors educated education educational ef effect effective effectively effectiveness
effects efficiency efficient efficiently effort efforts egg eggs eight eighteen eighth eighty either eject
elaborate elapsed elbow elder elderly elders elected election elections electoral electric electrical
electrician electricity electronic electronics elegant element elementary elements elephant elephants elevated
elevation elevator eleven elf eligible eliminate eliminated elite ellipsis ellipsize else else's elsewhere em
email emailed emails embarrass embarrassed embarrassing embassy embedded embrace embraced embracing emerge
emerged emergencies emergency emerges emerging emigrants emission emissions emit emitted emotion emotional
emotionally emotions emphasis emphasised emphasize emphasized emphasizes empire employ employed employee
employees employer employer's employers employing employment employs emptied empty emulation en enable enabled
enables enabling enclosing encode encoded encoding encodings encounter encountered encourage encouraged
encourages encouraging encrypt encrypted encryption enctype encyclopedia end end-of-line endangered ended
endif ending endless endorsed endpoint ends endured enemies enemy energetic energies energy enforce
enforcement engage engaged engagement engaging engine engineer engineering engineers engines enhance enhanced
enjoy enjoyable enjoyed enjoying enjoys enlisted enlistment enormous enough enriched ensemble ensure ensured
ensures ensuring entails enter entered entering enterprise enterprises enters entertain entertained
entertainer entertaining entertainment enthusiasm enthusiast enthusiastic enthusiastically entire entirely
entirety entitled entity entourage entrance entrepreneur entries entry enum enumerated envelope environment
environmental environmentalists environments envy eof epic epidemic episode episodes epoch equal equality
equally equals equator equestrian equipment equipped equity equivalent er era erase erased erected errno error
errors es escalator escape escaped escapes escaping especially essay essence essential essentially establish
established establishment establishments estate estimate estimated estimates estimation estimator et etc
ethical ethics ethnic etype euros euthanasia evacuated evacuation eval evaluate evaluated evaluation evasion
evasive even evening evenings evenly event events eventually ever every everybody everyday everyone everyone's
everything everything's everywhere evicted eviction evidence evident evidently evil evolution evolved evolving
ex ex-girlfriend ex-wife exact exactly exaggerate exaggerated exaggerating exaggeration exam examination
examinations examine examined examines examining example examples exams exceed exceeded exceeding exceeds
excellent except exception exceptional exceptionally exceptions excess excessive exchange exchanged exchanges
excited excitedly excitement exciting exclude excluded excluding exclusion exclusive exclusively excuse
excused excuses exec executable execute executed executing execution executions executive executives exemption
exercise exercises exercising exhausted exhibit exhibited exhibition exhibits exist existed existence existing
exists exit exited exiting exits exonerates exotic expand expanded expander expanding expanse expansion expect
expectation expectations expected expecting expects expedition expelled expenditure expenditures expense
expenses expensive experience experienced experiences experiencing experiment experimental experiments expert
expertise experts expiration expire expired expires expiry explain explained explaining explains explanation
explanations explicit explicitly explode exploded exploit exploiting explore explored explorers exploring
explosion explosions explosive explosives export exported exports expose exposed exposing exposure expr
express expressed expresses expressing expression expressions expulsion exquisite extend extended extending
extends extension extensions extensive extent external extinct extinguished extortion extra extract extracted
extracting extraction extradition extraneous extraordinary extreme extremely extremes extremist extremists eye
eyebrows eyeglasses eyelashes eyes eyesight f fabric fabulous facade face faced faces facial facilitate
facilitated facilities facility facing fact faction factions facto factor factories factors factory facts
faculty faded fail failed failing faillog fails failsafe failure failures faint fainted fair fairly fairy
faith faithful fake faked fall fallback fallen falling falls false falsely fame familiar families family
family's famous fan fanatic fancy fans fantastic fantasy far far-right fare fares farewell farm farmer
farmer's farmers farms farther fascinated fascinating fashion fashionable fashioned fast fast-forward fasten
fastened faster fastest fasting fat fatal fatally fate father father's fatter faucet fault faults favor
favorable favorite favour favourable favoured favourite favourites fax fc fd fear feared fearing fearless
fears feat feather feathered feathers feature featured features featuring fed fedora fee feed feedback feeding
feeds feel feeling feelings feels fees feet fell fellow felt female females feminist fence fenced fences
fencing ferry fertile festival festivals festivities fetch fetch-pack fetched fetches fetching fever few fewer
fflush fiasco fibres fiction fictitious field fielder fields fierce fiercely fifteen fifth fiftieth fifty
fight fighter fighters fighting fights figure figured figures file file-system file1 file2 filed filename
filenames files files0-from filesystem filing fill filled filling fills film film's filmed filming filmmaker
films filter filtered filters filthy final finale finalists finalize finally finals finance financed finances
financial financially financing find finding findings finds fine fined fines finest finger fingernail
fingernails fingerprint fingerprints fingers finish finished finishes finishing fire fired firefighter
firefighters fireman firemen fireplace fires firetruck fireworks firing firm firmly firms first first-class
fiscal fish fisherman fishermen fishes fishing fishy fist fists fit fitness fits fitted fitting five five-hour
fix fixed fixes fixing fixup flabbergasted flag flags flame flamenco flames flaming flannel flash flashing
flashlight flat flats flatter flattered flavor flea fled flee fleeing fleet flew flexibility flexible flies
flight flights flip flip-flops flipped flipping flips flirting float floaties floating floating-point floats
flock flood flooded flooding floods floor floors floppy floral flour flow flower flowered flowers flowery
flowing flown flows flu fluent fluently fluffy fluid fluorescent flush flushed flushing flute fly flying
fnmatch foam focus focused focuses focusing foehn fog foggy foiled fold folded folder folders folding foliage
folk folks follow followed followers following follows fond font fonts foo food food's foods foodstuffs fool
fooled foolish fools foot footage football footballer footer footprint footprints footsteps footy for
forbidden force forced forces forcing forecast forecasts forefront foreground forehead foreign foreign-data
foreigner foreigners forest forested forever forgave forged forgery forget forgetful forgets forgetting
forgive forgiven forgives forgot forgotten forints fork forked forking forklift forks form formal formally
format formation formats formatted formatting formed former formerly formidable forming forms formula fort
forth fortunate fortune forty forty-five forum forums forward fossil foster fought foul found foundation
founded founder founders founding fountain fountains four fourteen fourth fox fraction fractional fracture
fragile fragments frame framed frames framework franchise francs frankly frantic fraternity fraud fraudulent
fraught freak freaked freckles free freed freedom freeing freely freestyle freeway freeze freezer freezes
freezing freight frequency frequent frequently fresh freshly freshman fridge fried friend friend's friendly
friends friendship fries frighten frightened frightening fro frog from from-code front frontend frost froze
frozen fruit fruits frustrated frustrating frustration frying fsck fsmonitor fsmonitor--daemon fstat fsync ft
ftp fts fuel fuels fulfil fulfill fulfilled fulfilling full full-time full_page_writes fully fumble fumes fun
function functionality functioning functions fund fundamental fundamentally funded funding funds funeral funny
fur furious furnished furniture furry further fuss future futures futuristic fuzzy g gadgets gain gained
gaining gains gala gallery gallons galloping gamble gambler gambling game games gang gap gaps garage garages
garb garbage garden gardener gardening gardens garments gas gasduct gases gasoline gate gated gather gathered
gathering gathers gauge gave gawk gay gaze gazes gazing gc gear gender general generally generals generate
generated generates generating generation generations generator generic generous genetic genetically genius
genre gentle gentleman gentlemen gently genuine geo geographic geography geometric gesture gestures gesturing
get get_updates getopts gets gettext getting ghost ghosts giant gid gift gifted gifts gigantic giggled gio
girl girl's girlfriend girlfriend's girlfriends girls git gitdir gitmodules give given gives giving glacier
glad gladly glamorous glance glanced glances glancing glass glasses glider gliding glimpse glob global
globally globe gloomy glory glove gloved gloves glowing glue gmon gnu go go-cart goal goalie goalkeeper goals
goat goatee goats goes goggles going gold golden golf golfer gone gonna good good-looking goodbye goodbyes
goodnight goods gorgeous gorilla gossip gossiping got gotta gotten govern governed governing government
government's governments governor governor's governors gown gowns gpg gpg-agent grab grabbed grabbing grabs
grace grade graders grades gradual gradually graduate graduated graduates graduating graduation graffiti
graffitied graft grain grammar grammatical grammatically grams grandchildren granddaughter grandfather
grandfather's grandmother grandmother's grandpa grandparents grandson grant granted grants grapefruit grapes
graph graphic graphics grasp grasping grass grassy grateful gratitude grave gravel gravely graves gravity gray
gray-haired grazing greasy great greater greatest greatly greatness greedy green greenery greenhouse greet
greeted greeting grep gresource grew grey greyhound greyhounds grid grief grill grilled grilling grills grim
grimaced grind grinding grinds grinning grip gripped gripping groceries grocery groom gross ground grounded
grounds group group's grouped grouping groups grow growing growled grown grows growth grumbling gt gtk
guarantee guaranteed guarantees guard guarded guarding guards guess guessed guessing guest guests guidance
guide guidebook guided guidelines guides guiding guillemets guilt guilty guitar guitarist guitarists guitars
gullible gum gums gun gunman gunmen guns gunshot gunshots gut guts guy guys gym gymnasium gymnast gymnastics
gymnasts gzip gzip-compressed gérance h habit habitable habits hacker hackers hacksaw had hadn't hail hair
hair's haircut haired hairstyle half half-hour half-time half-year halfway hall halls hallucination
hallucinations hallway halt halted ham hamburger hamburgers hammer hammering hammers hammock hand handbag
handbags handball handcuffed handed handful handheld handicapped handing handkerchief handkerchiefs handle
handled handler handles handling handmade handrail hands handshake handsome handstand handstands handwriting
handy hang hanged hanging hangover hangs happen happened happening happens happier happiest happily happiness
happy harassment harbor hard harder hardest hardly hardware hardwood hardworking harm harmful harmless
harmonica harmony harms harness harp harsh harshly harvest harvesting has hash hashing hashish hasn't hasty
hat hatched hate hated hates hatred hats haunted have haven haven't having hay hazard he he'd he'll he's head
headache headaches headband headbands headdress headed header headers heading headlights headline headlines
headphones headquarters heads headscarf headscarves headset heal healed healing health healthcare healthier
healthy heap hear heard hearing hears heart heartbeat heartless hearts heat heated heater heating heats heaven
heavier heavily heavy heavyset hectares hectic hedge heels height heightened heights held helicopter
helicopters hell hello helm helmet helmets help helped helper helpful helping helpless helps hen hence hens
hepatitis her herbs herding here here's heritage hero heroes heroic heroin hers herself hesitate hesitated
hesitation hex hexadecimal hi hibernate hid hidden hide hideous hides hiding hierarchy high high-level high-
profile high-ranking high-speed highchair higher highest highlight highlighted highlighting highlights highly
highway highways hike hiker hikers hikes hiking hilarious hill hills hillside him himself hind hint hinting
hints hip hips hire hired hiring his histogram historian historians historic historical historically histories
history hit hitchhiking hits hitting hoax hobbies hobby hockey hold holder holders holding holds hole holes
holiday holidaymakers holidays holy home homeless homemade homeowners homes homesick hometown homework
homicide honest honestly honesty honey honeymoon honor honored honour honoured hood hooded hoodie hook hooked
hooks hoop hoops hope hoped hopeful hopeless hopes hoping horizon horizontal horn horns horrible horrified
horror horse horse's horseback horses hose hospital hospitality hospitalized hospitals host hostage hostages
hosted hostname hosts hostssl hot hotdog hotdogs hotel hotel's hotels hour hours house housed household
households houses housewife housing how however hp html http https hu hub huddle huddled hug huge hugged
hugging hugs hula human human-readable humanitarian humanity humans humble humid humiliate humiliated
humiliating humming humor humorous humour hunched hundred hundreds hung hunger hungry hunk hunks hunt hunted
hunter hunting hurdle hurdles hurricane hurried hurry hurt hurting hurts husband husband's husbands hut huts
hvg hydrant hydrogen hyphen hypocrisy hypocrite hypocritical hypothesis hypothetical hysterical i icanon ice
iceberg iced icon icons iconv icy id idea ideal ideas ident identical identification identified identifier
identifiers identify identifying identity ideology idiot idle ids iec if ifdef igniter ignorance ignore
ignore-case ignored ignores ignoring ill illegal illegally illiterate illness illnesses illuminated illusion
illusions illustrate illustrated image images imaginary imagination imaginative imagine imagined imagining
imitate imitating imitation immature immediate immediately immense immigrant immigrants immigration imminent
immune immunity immutable impact impacted impacts impartial impatient imperative implement implementation
implemented implicit implied implies imply implying impolite import importance important importantly imported
importing imports impose imposed imposing imposition impossible impress impressed impression impressions
impressive imprisoned improper improve improved improvement improvements improving improvised impulse
impulsive in in-house in-place inaccessible inactive inadequate inappropriate inauguration incandescent
incapable incentives inch inches incident incidents incline inclined include include-untracked included
includes including inclusion inclusive income incomes incoming incompatible incompetent incomplete
inconsistency inconsistent inconvenience incorporate incorporated incorrect increase increased increases
increasing increasingly incredible incredibly increment incremental incurable incurred indebted indecent
indeed indefinitely indent indentation indented independence independent independently index indexed indexes
indexing indicate indicated indicates indicating indication indications indicator indicators indictment
indifferent indirect indirectly individual individually individuals indoor indoors induce industrial
industries industry ineffective inefficient inet inevitable inexpensive infant infants infected infection
infections infectious inferior infinite inflammation inflammatory inflatable inflated inflation inflexible
influence influenced influences influential influx info inform informal information informed infrastructure
ingredient ingredients inhabitants inhaled inherit inheritance inherited inherits inhibit inhibiting init
initdb initial initialization initialize initialized initializing initially initials initiate initiated
initiative initiatives inject injection injure injured injuries injury ink inline inmates innate inner inning
innings innocence innocent innocuous innovation innovative inode inotify inplace input inputs inquired inquiry
insane insect insects insecure insensitive inseparable insert inserted inserting insertion inserts inside
insight insignificant insist insisted insisting insists inspect inspecting inspection inspections inspector
inspectors inspects inspiration inspired instability install installation installed installing instance
instances instant instantly instdir instead instinct instincts institutes institution institutions instructing
instruction instructions instructive instructor instrument instrumental instruments insufficient insult
insulted insulting insults insurance insured insurers intake integer integrate integrated integration
integrity intellectual intelligence intelligent intend intended intends intense intensity intensive intent
intention intentionally intentions intently interact interacting interaction interactive interactively
interchange interest interested interesting interests interface interfaces interfere interfering interim
intermediate internal internally international internationally interpolation interpret interpretation
interpretations interpreted interpreter interrupt interrupted intersection interval intervals intervene
intervened intervention interventions interview interviewed interviews intimate intimidate intimidated
intimidating intimidation intl into intolerant intoxication intrigued introduce introduced introduces
introducing introduction invaded invalid invasion invented invention inventions inventor inverted invest
invested investigate investigated investigating investigation investigations investigators investing
investment investments investor investors invincible invisible invitation invitations invite invited invites
inviting invocation invoice invoices invoke invoked involve involved involvement involves involving ip iron
ironed ironing irrelevant irresponsible irritable irritated irritating irtt is island isn't isn’t isolated
isolation issue issued issuer issues issuing istrip it it'd it'll it's itchy item items iteration iterations
its itself j jacket jackets jail jailed jam jammed jams jar jars jaw jazz jd jealous jean jeans jeep jerk
jersey jerseys jet jewel jewelry jewels job jobs jobserver jockey jockeys jog jogging jogs join joined joiner
joining joins joint jointer jointly joke jokes joking journal journalism journalist journalists journey
journeys joy jsonb jsonpath judge judged judgement judges judging judgment judicial juggles juggling juice
jump jumped jumper jumping jumps jumpsuit jumpsuits jungle junior junk jury just justice justices
justification justified justify k kadm5 karaoke karate kayak kayaking kayaks keen keep keepalive keeper
keeping keeps kept kernel ketchup kettle key key-value keyblock keyboard keyboards keygrip keyid keymap keypad
keyring keys keysaltlist keyseq keyserver keysize keytab keyword keywords kg khaki khakis kick kickboxing
kicked kicking kicks kid kidding kidnapped kidnappers kidnapping kids kill killall killed killer killers
killing killings kills kilo kilogram kilograms kilometer kilometers kilometre kilometres kilos kilt kimono
kimonos kind kindergarten kindly kindness kinds king kiosk kiss kissed kisses kissing kit kitchen kite kites
kitten kittens km knee knee-high kneeling kneels knees knew knickers knife knight knit knitted knitting knives
knock knocked knocking knockout knot know knowing knowingly knowledge knowledgeable known knows kraj krb5 ksu
kung-fu kvno kw l la lab label labeled labelled labels labor laboratory labour lace lack lacked lacking lacks
lacrosse lactose ladder ladders laden ladies lady lag laid lake lakes lamp land landed landing landlord
landmark lands landscape lane lanes language languages lantern lanterns lap laptop laptops large large-object
large-scale largely larger largest laser lasso last lasted lasting lastlog lasts late lately later lateral
latest latex latter laugh laughed laughing laughs laughter launch launchable launched launches launching
laundromat laundry lavender law lawmakers lawn laws lawsuit lawsuits lawyer lawyers lay layer layers laying
layoffs layout lays laziness lazy ld ldap lead leader leaders leadership leading leads leaf leagues leak
leaked leaking leaks lean leaned leaning leans leap leaping leaps leapt learn learned learner learning learns
learnt lease leash leashes least leather leave leaves leaving lecture lecturer lecturers led ledge left left-
handed left-wing leftovers leg legacy legal legality legally legend legendary legends legged leggings
legislation legislative legislators legitimate legs leisure lemon lemonade lemons lend lending length lengthy
lenient lens lenses lent leopard leotard lesions less less-than lesson lessons let let's lethal lets letter
letters letting lettuce level levels liability liable liar liars libc6 liberal libraries library licence
license licensed licenses lick licking licks lid lie lied lies life life's life-threatening lifelong lifespan
lifestyle lifetime lift lifted lifting lifts light lighted lighter lighting lightly lightning lights
lightweight likable like liked likelihood likely likes likewise liking limbs lime limit limitations limited
limits limp limping line lined lines lingerie linguistic linguistics lining link linked linking links lion lip
lips lipstick liquid liquidation liquidity liquids liquor list listed listen listened listener listening
listens listing listings lists lit liter literal literally literary literature litigation litre litres litter
littered little live lived lively liver lives living lizard lld llu lo load load_ext loadable loaded loader
loading loads loaf loan loans loaves lobby lobbying local locale locale's locales localization localized
locally locals locate located location locations lock locked locker locking locks locomotive log logged logger
logging logic logical login logo logout logs lone lonely long long-distance long-haired long-range long-
running long-sleeve long-sleeved long-term longer longest longtime look looked looking looks lookup lookups
loom looming loop loose loosen lorries lorry lose loser loses losing loss losses lost lot lots lottery loud
louder loudly lounge lounging love loved lovely lovers loves loving low low-cost lower lowercase lowered
lowering lowest loyal loyalty ls ls-files ls-tree lstat lt lu luck lucky lucrative luggage lunar lunatic lunch
lunches lung lungs lus lush luxurious luxury lx lying lynching lyrics lz4 lzma m machine machinery machines
macro macrolanguage mad made madman madness mafia magazine magazines magic magical magician magistrate magnet
magnificent magnified magnifying mahjong maid maiden mail mailbox mailman main mainland mainly mainstream
maint maintain maintained maintainer maintaining maintains maintenance major majored majority make make-up
make_builtin makefile maker makers makes makeshift makeup making male males malformed mall malloc malware
mammals man man's manage managed management manager managers manages managing mandate mandatory maneuver
maneuvers mangoes maniac manifest manipulate manipulated manipulation mankind mannequin mannequins manner
manners mansion manslaughter manual manually manufactured manufacturer manufacturers manufactures
manufacturing manuscript many map mapped mapping maps marathon marble marched marches marching margin margins
marijuana mark marked marker markers market marketing marketplace markets marking markings marks markup maroon
marriage married marry marrying martial mascot mashed mask masked masks mass massacre massage masses massive
master masterpiece masters mat match matched matches matching mate material materialistic materialized
materials maternity mates math mathematics mats matter mattered matters mattress mattresses mature maturity
max max_connections max_replication_slots maximize maximum maxrenewlife may maybe mayo mayor mayor's mbox me
meadow meal meals mean meaning meaningful meaningless meanings means meant meantime meanwhile measles measure
measured measurements measures measuring meat mechanic mechanical mechanics mechanism mechanisms medal medals
media medical medication medicine medicines medieval meditating medium medium-sized meds meet meeting meetings
meets megabytes melody melon melons melt melted melting melts member members membership memo memoirs memorial
memories memorize memorized memory men men's mental mentality mentally mention mentioned mentioning mentions
menu menubar menus merchandise merchant mercury mercy mere merely merge merge-base merged merger merges
merging mermaid merry-go-round mesmerized mesothelioma mess message messages messenger messing messy met meta
metadata metainfo metal meter meters method methods metre metres metro metropolis metropolitan mg mic mice
microbe microphone microphones microscope microscopes microwave mid midair midday middle middle-aged
midfielder midnight midst midway might might've migrant migrants migration mild mildly mile mileage miles
milestone militants military militia milk milking mill milliards millimetres million millionaire millionaires
millions milliseconds mimetype mind minds mine mineral minerals miners mines mini miniature minimal minimize
minimum mining miniskirt ministers ministries minivan minor minorities minority minors minus minute minutes
miracle miracles mirror mirrored mirrors miserable misery misjudged mismatch mismatched misplaced miss missed
misses missile missiles missing mission missions mist mistake mistaken mistakenly mistakes mistook mistrust
misunderstand misunderstanding misunderstood mitt mittens mix mixed mixer mixing mixture mkdir mm mmap
mnemonic mnt mob mobile mobility mock mocked mode model models moderate modern modern-day modernisation modes
modest modestly modesty modification modifications modified modifier modifiers modifies modify modifying
module modules modulus moist molecule mom moment moments momentum monetary money monitor monitored monitoring
monitors monk monkey monkeys monks monopoly monster month month's monthly months monument mood moon mop moped
mopping mops moral more moreover morning mortal mortality mortgage mortgages mosque mosquito mosquitoes most
mostly motel mother mother's mother-in-law mothers motion motioned motionless motivated motivation motive
motives motocross motor motorbike motorbikes motorboat motorcycle motorcycles motorcyclist motorcyclists
motorized motorway motto mound mount mountain mountainous mountains mountaintop mounted mounting mounts mouse
mouth mouths move moved movement movements moves movie movies moving movprfx mow mower mowing mph msg msgctxt
msgid msgids msgstr mstype mtime much mud muddy muffins mug mugged mule mules multi-pack multi-pack-index
multibyte multicast multicolor multicolored multidimensional multiple multiplex multiplexed multiplier
multiply multirange multixact mum municipal municipalities municipality mural murder murdered murderer murders
murky muscle muscles muscular museum museums mushroom mushrooms music musical musician musicians must must've
mustache mustard mustered mustn't mutual mutually muzzle muzzled my myself mysteries mysterious mystery myth n
nail nails naive naked name name's named namely names namespace namespaces naming nanoseconds nap napkin
napkins napping narrative narrow narrowly nasty nation nation's national nationality nationals nations
nationwide native natural naturally nature naughty navigate navigates navigation navy nd near nearby nearer
nearest nearly nears neat neatly necessarily necessary necessity neck necklace necklaces need needed needing
needle needs negative neglect neglected negligent negotiate negotiated negotiating negotiation negotiations
negotiator neighbor neighbor's neighborhood neighboring neighbors neighbour neighbourhood neighbouring
neighbours neither neon nephew nerve nerves nervous nervously nervousness nested nesting nests net netmask
nets network networking networks neural neutral never nevertheless new newborn newer newest newline newlines
newly newlywed news newspaper newspapers next nice nicely niceness nicer nicest nickname niece night night's
nightclub nightmare nightmares nights nighttime nil nine ninety ninth no no-dereference no-one no-target-
directory nobody nod nodded node nodes noise noises noisy nominated nomination nominations nominee nominees
non non-alcoholic non-binding non-breaking non-empty non-existing non-integer non-joiner non-numeric non-
option non-recursive non-revocable non-string non-unique non-zero nonce nondeterministic none nonetheless
nonexistent nonmembers nonprofit nonsense nonzero noodles noon nor normal normally nose noses nostalgia not
notable notably notation notations note notebook notebooks noted notes notes-ref nothing notice noticeable
noticeably noticed noticing notification notifications notified notify notion notorious novel novelist novels
now nowadays nowhere ns nscd nuclear nude nuisance null nulls num numb number numbered numbering numbers
numerals numeric numerical numerous nun nurse nursery nurses nursing nutrition nuts o o'clock oak oar oath
obese obesity obey obeyed object objected objection objections objective objectives objects obligation
obligations obligatory obliged oboe obscure observation observe observed observers observes observing obsessed
obsolete obstacle obstacles obstinate obtain obtained obtaining obvious obviously occasion occasionally
occasions occupants occupation occupied occupy occupying occur occurred occurrence occurrences occurring
occurs ocean oceans octal octopus odd odds of off off-camera offence offences offend offended offender
offenders offensive offer offered offering offers office officer officers offices official officially
officials offline offset offspring often oid oil ok okay okrug old old-fashioned older oldest olive omit
omitted on on-line once oncoming one one's one-day one-dimensional one-off ones oneself ongoing onion onions
online onlookers only onto op opcode open open-air open-ended open_sync opened opener opening openly opens
opera operand operands operate operated operates operating operation operational operations operator operators
opinion opinions opost opponent opponents opportunities opportunity oppose opposed opposing opposite
opposition oppression opt opted optimism optimist optimistic optimization optimize optimizer option optional
optionally options or orange oranges orbit orchard orchestra order ordered ordered-set ordering orderly orders
ordinal ordinary org organ organic organisation organisations organise organised organiser organisers
organising organisms organization organization's organizations organize organized organizer organizers
organizing organs oriental orientation orig origin original originally originated ornate orphan other other's
others otherwise ought our ours ourselves ousted out outcome outdated outdoor outdoors outer outfit outfits
outgoing outlet outlets outlined outlook outpatient output outputs outrage outraged outrageous outrun outside
outsider outskirts outspoken outstanding outstretched ovarian ovation oven over overall overalls overcast
overcoat overcome overcoming overdose overexert overflow overflowing overgrown overhang overhead overheard
overlapping overlook overlooked overlooking overly overnight overreacting overridden override overrides
overriding overseas oversees oversight oversize oversized oversleep overslept overstepped overthrow overtime
overturned overview overweight overwhelmed overwhelming overwhelmingly overwork overwrite overwriting
overwritten owe owed owes owl own owned owner owners ownership owning owns oxen oxygen oysters ozone p pace
pacifier pacing pack pack-objects package package's packages packaging packed packet packets packfile
packfiles packing packs pad padded padding paddle paddles paddling pads paedophiles page pager pages paid pain
painful pains paint painted painter painting paintings paints pair pairs pajamas palace pale palette
palliative palm pan pancakes panda pandas pane panel panels panic panicked pans pant pants paper paperback
papers paperwork parachute parachutes parachuting parade paradise paradox paragraph paragraphs parallel
paralyzed paramedics parameter parameters paranoia parasailing parasol parcel pardon parenb parent parentheses
parenthesis parents parish parity park parked parking parks parliament parliamentary parlor parrot parse
parsed parser parsers parsing part part-time parted partial partially participant participants participate
participated participates participating participation particular particularly parties partisan partition
partitioned partitioning partitions partly partner partners partnership parts party party's partying pass
passage passed passenger passengers passerby passers-by passersby passes passing passion passionate
passionately passive passphrase passphrases passport passports passwd password passwords past pasta paste
pastor pasture patch patches patent path pathetic pathname pathogens paths pathspec pathspec-from-file pathway
patience patient patient's patiently patients patio patrol patron patrons patsplit patted pattern patterned
patterns pause paused pauses paved pavement pavilion paving paws pay paying payload payment payments payroll
pays peace peaceful peacefully peach peaches peacock peak peaks peanut peanuts pear pearl pearls pedal
pedestrian pedestrians peeked peeking peel peeled peeling peer peering peers pen penalties penalty pence
pencil pencils pending penny pens pension pensions people people's pep-0263 pepper peppers peps per per-
version perceive perceived percent percentage perception perched perfect perfectly perform performance
performances performed performer performers performing performs perfume perhaps perimeter period periods
permanent permanently permission permissions permit permits permitted permitting perpetrator perpetrators
perplexed persecution persevering persistent person person's personal personalities personality personally
personnel persons perspective persuade persuaded pesos pessimistic pesticides pet petals petition petrol pets
petting pg_ pg_control pg_controldata pg_database pg_hba pg_upgrade pgpipe pharmacy phase phases phenomena
phenomenon philosopher philosophy phone phoned phones phonetic phosphorous photo photogenic photograph
photographed photographer photographers photographing photographs photography photos phrase physical
physically physician physicians physics pianist piano pick picked picket picking pickpockets picks pickup
picky picnic picture pictured pictures picturesque pid pidgins pie piece pieces pier pierced pies pig pigeon
pigeons pigs pigtails pile piled piles pilgrimage pilgrims piling pillar pillars pillow pillows pills pilot
pilots pin pinata pine pineapple pinentry ping-pong pink pinned pins pinstriped pioneer pipe pipeline
pipelines piper pipes pirate pirates pistol pit pitch pitched pitcher pitchers pitches pitching pity pixbuf
pixel pixels pizza pizzas pkgname place placed places placing plague plagued plaid plain plains plaintiffs
plan plane planes planet planetary planets plank planned planner planner's planning plans plant planted
planting plants plaque plastic plate plates platform platforms platinum play played player players playfully
playground playing playlist plays plaza pleaded pleasant pleasantly please pleased pleasure pleasures pledged
plenty pleura plot plots plotting plowing plucked plucking plug plugin plugins plumber plunged plural plus
plush pm pneumococcus po pocket pocketed pockets podium poem poems poet poetry poets point point-in-time
pointed pointer pointing pointless points poised poison poisoned poisoning poisonous poke poked poker pokes
poking polar pole poles police policeman policemen policies policy policymakers polished polite politely
political politically politician politicians politics polka poll polling polls polluted pollution polo
polymorphic pond pong pony ponytail poodle poodles pool pools poor poorer poorest poorly pop popcorn popd
popped pops popular popularity populated population populations popup porcelain porch pork port portable
portal portfolio portion portrait portraits portray portrayed ports pose posed poses posing position
positional positioned positions positive positively posix possess possession possessions possessive
possibilities possibility possible possibly post postal postcard postcards posted poster posters postfix
postgres posting postmaster postpone postponed posts pot potato potatoes potential potentially pothole
potholes pots pottery poultry pound pounding pounds pour poured pouring pours poverty powder power powered
powerful powers practical practically practice practiced practices practicing practising praise praised
praises prank pray prayed prayer prayers praying pre-employment preacher precarious precaution precede
preceded precedence precedent precedes preceding precious precise precisely precision predatory predecessor
predicate predicates predict predictable predicted prediction predictions predicts predominantly prefer
preferable preference preferences preferred prefers prefix prefixed prefixes pregnancy pregnant prejudice
prejudiced preliminary premature premiere premises premium preoccupied preparation preparations prepare
prepared prepares preparing prepend prerequisite prerequisites preschool prescribed prescription presence
present presentation presented presenter presenting presents preservation preserve preserved preserving preset
presidency president president's presidential presidents press pressed presses pressing pressure prestigious
presumably presume presumed pretend pretended pretending pretends prettier prettiest pretty prevails prevent
prevented preventing prevention prevents preview previous previously prey price priced prices pricked pride
priest primarily primary primates primitive prince princess principal principals principle principles print
printable printed printer printf printing prints prior priorities priority prison prisoner prisoners privacy
private privately privilege privileges prize prizes pro probability probable probably probe probes problem
problematic problems proc procedural procedure procedures proceed proceeded proceeding proceedings process
processed processes processing procession processor produce produced producer producers produces producing
product production productive productivity products profession professional professionals professor professors
profile profiles profiling profit profitable profits profound program programme programmer programmes
programming programs progress progressive prohibit prohibited prohibiting prohibition prohibits project
project's projected projector projects prom prominent promise promised promises promising promisor promote
promoted promoting promotion prompt prompted prompting pronounce pronounced pronunciation proof proofread
propaganda propagation proper properly properties property prophecy proportion proposal proposals propose
proposed proposes proposing proposition propped proprietor pros prosecute prosecuted prosecution prosecutor
prosecutor's prosecutors prospects prosperity prostate prostitution protagonist protect protected protecting
protection protections protective protein protest protested protester protesters protesting protests
proto_version protocol protocols proud prove proved proven proverb proves provide provided provider providers
provides providing province provinces provincial provision provisional provisions provocative provoke provoked
proxies proximity proxy prune pruned pruning pry pset pseudo pseudo-type psql psychiatric psychiatrist psychic
psychological psychologist psychology psychoses psychosis pty pub public publication publications publicity
publicly publish published publisher publishes publishing puck pudding puddle puffy pull pulled pulling pulls
pulse pulses pump pumped pumpkin punch punched punches punching punctual punctuation punish punishable
punished punishing punishment punk pupil pupils puppet puppies puppy purchase purchased purchases purchasing
pure purely purge purged purple purpose purposely purposes purse purses pursue pursued pursuing pursuit push
pushed pushes pushing put puts putting puzzle puzzled puzzles px pyramid python q quad quaint qualification
qualifications qualified qualify qualifying qualities quality quantities quantity quarrel quarreling quarrels
quarter quarterback quarterly quarters queer queries query query's question questionable questioned
questioning questions queue queues quick quicker quickly quiet quietly quilt quit quite quitting quiz quota
quotation quote quoted quotes quoting r rabbit rabbits race raced racer racers races racetrack racial racing
racism racist rack racket rackets racquet radar radiation radical radio radioactive radius radix raft rafting
rafts rag raids rail railing railings railroad railroads rails railway railways rain rainbow raincoat rained
raining rains rainy raise raised raises raising rake raking rallies rally ramp ran random rang range range-
diff ranges ranging rank ranked ranks ransom ransomware rape raped rapid rapidly rapids rare rarely rarp rash
rat rate rated rates rather rating ratings ratio rational rats ravine raw rays razor rc rcmd rd re-election
reach reachable reached reaches reaching react reacted reacting reaction reactions reactor read read-only
readable reader readers readily readiness reading readonly reads ready real realise realised realistic reality
realize realized realizes really realm reapply rear reason reasonable reasonably reasons reassuring rebase
rebasing rebel rebellion rebels reboot rebound rebuild rebuilt recall recalled recalls receding receipt
receive received receiver receives receiving recent recently reception receptionist recession recipe recipes
recipient recipients recite reckless reclines recognise recognised recognition recognize recognized recognizes
recognizing recommend recommendation recommendations recommended recommends recompile reconcile reconciliation
reconfigure reconsider reconsidered reconstruction record recorded recorder recording records recover
recovered recovering recovery recreate recreational recruit recruiting recruitment rectangular recurring
recurse recurse-submodules recursion recursive recursively recycled recycling red red-green red-hair red-
haired reddish redevelopment redhead redheaded redirect redirection redistribute redo reduce reduced reduces
reducing reduction reductions redundant reenactment ref refer referee referees reference referenced references
referencing referendum referred referring refers refilled refineries reflect reflected reflecting reflection
reflective reflects reflink reflog refname reform reformat reformed reforms refrain refresh refreshed
refreshing refrigerator refs refspec refspecs refuge refugee refugees refund refurbishment refusal refuse
refused refuses refusing reg regain regained regard regarded regarding regardless regards regeneration regex
regexp regime region region's regional regions register registered registering registers registration registry
regret regrets regretted regular regularly regulate regulated regulation regulations regulator regulators
regulatory rehearsal rehearsing reign reindex reindexed reindexing reinforced reinitialize reinstall
reinstalled reiterated reject rejected rejection rejects related relation relations relationship relationships
relative relatively relatives relativity relax relaxation relaxed relaxes relaxing relay release released
releases releasing relented relevant relfilenode reliable relied relief relies relieve relieved religion
religions religious reload relocatable relocated relocation reluctance reluctant reluctantly rely relying
remain remainder remained remaining remains remake remark remarkable remarkably remarked remarks remarried
remedy remember remembered remembering remembers remind reminded reminder reminding reminds remote remote-curl
remote-tracking remotes removable removal remove removed removes removing rename renamed renames renaming
render rendered renderer rendering renegotiation renew renewable renewal renewed renovated renovation renowned
rent rental rented renting rents reopen reopened repack repaid repair repaired repairing repairs repay repeat
repeated repeatedly repeating repeats repertoire replace replaced replacement replacing replay replaygain
replica replicated replication replied reply repo report reported reportedly reporter reporters reporting
reports repositories repository represent representation representative representatives represented
representing represents reptiles reputable reputation request requested requesting requests require required
requirement requirements requires requiring rescue rescued rescuing research researched researcher researchers
resemblance resemble resembles resembling reservation reservations reserve reserved reserves reset resetting
residence resident residential residents resides residue residues resign resignation resigned resigning resist
resistance resistant resisted resize resolution resolutions resolve resolved resolving resort resorting
resource resources respect respected respectful respective respectively respects respond responded respondents
responder responding response responses responsibilities responsibility responsible rest restart restarting
restaurant restaurant's restaurants rested resting restitution restless restoration restore restore_command
restored restoring restrain restrained restrict restricted restriction restrictions restroom restructuring
rests result resulted resulting results resume resumed resync retail retailers retain retained retire retired
retirement retiring retracted retreat retreated retrieve retrieved retrieving retry retrying return returned
returning returns reunion reusable reuse reused reuteri rev rev-list rev-parse reveal revealed revealing
reveals revelation revelations revenge revenue revenues reversal reverse reversed revert review reviewed
reviewing reviews revised revision revisions revive revived revocation revoke revoked revoker revolt
revolution revolve revolving revs reward rewind reword rewrite rewritten rhythm ribbon ribbons ribs rice rich
richer riches richest rickshaw rid ridden ridding riddle ride rider riders rides ridiculous riding rifle
rifles right right-hand right-handed right-wing rightly rights ring ringing rings ringtone rink rinsed riot
riots rip ripe ripped rise risen riser rises rising risk risked risks risky ritual rival rivals river
riverbank rivers rm road roadmap roads roadside robbed robber robbers robbery robe robes robot robots rock
rocker rocket rocking rocks rocky rod rode rodeo role roles roll rolled roller rollerblades rollerblading
rollerskates rollerskating rolling rolls romance romantic roof rooftop room room's roommate rooms root rooted
roots rope ropes rose roses rotated rotation rotten rough roughly round roundabout rounded rounding rounds
route routes routine routines routing row row-level rowboat rowing rows rpc rub rubbed rubber rubbish rubble
rubs rude rudeness rug rugby rugged rugs ruin ruined ruining ruins rule rule's ruled ruler rules ruling rumor
rumors rumours run run-down run-time rung runner runner-up runners running runs runtime runway rural rush
rushed rustic rusty ruthless rw s sack sacks sacred sacrifice sacrifices sad saddle sadness safari safe safely
safer safest safety said sail sailboat sailed sailing sailor sailors sails sake salad salaries salary sale
sales salesman salmon salon salt salty same sample samples samurai sanction sanctioned sanctions sand sandals
sandbags sandbox sandwich sandwiches sandy sane sang sanitizer sanity sank sarcastic saris sat satellite
satisfactory satisfied satisfy satisfying sauce sauna sausage sausages save saved savepoint savers saves
saving savings saw sawing saxophone say saying says scaffold scaffolding scalar scale scales scaling scan
scandal scandals scanned scanning scans scantily scar scarce scarcely scare scared scares scarf scaring
scarves scary scattered scenario scene scenery scenes scenic scent schedule scheduled scheduler schema schemas
scheme schemes scholar scholarship school school's schoolchildren schoolgirl schools science scientific
scientifically scientist scientists scissors scolded scooping scooter scooters scope score scored scorer
scores scoring scout scouts scrap scraped scraps scratch scratched scratching scream screamed screaming
screams screen screens screensaver screenshot screw screwdriver script scripts scroll scrollbar scrollbars
scrolled scrolling scrubs scrutiny scuba sculptor sculpture sculptures sea seafood seagulls seal sealed search
searched searches searching seashore seaside season seasonal seasons seat seatbelt seated seating seats
seaweed sec second second-largest secondary secondhand seconds secrecy secret secretaries secretary secretive
secretly secrets sect section sections sector sectors secular secure secured securely securing securities
security security-restricted see seed seeds seeing seek seekers seeking seeks seem seemed seemingly seems seen
sees seesaw segment segments seized seldom select selected selecting selection selections selector selectors
selects self self-defence self-esteem self-made self-service self-signature self-signed selfie selfish
selfishness sell sellers selling sells semaphore semester semi semi-final semicolon seminar senators send
sending sends senior seniors sensation sense sensed sensible sensitive sensitivity sent sentence sentenced
sentences sentiment separate separated separately separates separating separation separatist separatists
separator separators sequence sequences serenade serial serializable serialization series serious seriously
sermon servants serve served server server's servers serves service services servicing serving session
sessions set set-returning setback setenv setlocale sets setting settings settle settled settlement
settlements setup seven seventeen seventh seventy several severance severe severely sew sewage sewing sex
sexual sexually sexy sh sha1 shabby shack shade shades shadow shadowed shadows shady shaggy shake shaken
shakes shaking shall shallow shame shampoo shape shaped shapes share shared shareholder shareholders shares
sharing shark sharks sharp sharpen sharpened sharpening sharply shave shaved shaves shaving shawl she she'd
she'll she's shed sheep sheer sheet sheets shelf shell shells shelter shelters shelves shepherd shield
shielding shields shift shifted shifts shine shines shingles shining shiny ship shipping ships shirt shirted
shirtless shirts shivering shlibs shock shocked shocking shoe shoelaces shoes shoeshine shone shook shoot
shooting shoots shop shoppers shopping shops shore shoreline short short-haired short-term shortage
shortcomings shortcut shorter shortest shorthand shortly shorts shot shots should should've shoulder shoulders
shouldn't shout shouted shouting shouts shoved shovel shoveling shovels show show's showcase showed shower
showered showers showing shown shows shrank shred shrine shrink shrugged shrunk shuffle shuffled shut shutdown
shutting shuttle shy si siblings sick sickness side sidelines sides sidewalk sidewalks sideways siding siege
sig sigh sighed sight sights sign signal signaled signals signature signatures signed signer significance
significant significantly signing signs silence silent silently silhouette silhouetted silk silly silver
similar similarities similarly simple simple-ipc simpler simply simulation simultaneous simultaneously since
sincere sincerely sing singer singer's singer-songwriter singers singing single single-user singled singles
sings singular sink sinking sip sister sister's sisters sit site sites sits sitting situated situation
situations six six-month six-thirty sixteen sixth sixty size sized sizeof sizes skate skateboard skateboarder
skateboarders skateboarding skateboards skater skaters skates skating skeleton skeptical sketch sketching ski
skidded skier skiers skies skiing skill skilled skillfully skills skin skinny skip skip-checks skipped
skipping skirt skirts skis skull sky skydiving skyline skyscraper slab slacks slam slammed slander slap
slapped slash slashes slattach slatted slave slavery slaves sled sledding sleep sleeper sleeping sleeps sleepy
sleeve sleeveless sleeves sleigh slender slept slice slices slicing slid slide slider slides sliding slight
slightest slightly slim slip slipped slippers slippery slips slogan slogans slope slopes sloppy slot slots
slow slowdown slowed slower slowing slowly slum slumped small smaller smallest smart smartcard smarter
smartphone smartphones smashed smb smell smelled smelling smells smelter smile smiled smiles smiling smirking
smog smoke smoked smoker smokes smoking smoky smooth smoothly snack snacks snake snakes snap snapped snaps
snapshot sneak sneakers sneaky sneeze sneezing sniffing snore snoring snorkel snow snow-covered snowball
snowboard snowboarder snowboarders snowboarding snowboards snowcapped snowed snowfall snowing snowman snows
snowshoes snowstorm snowsuit snowy so so-called soaked soap soared soaring soars sobbing sober soccer sociable
social socializing socially societies society sock socket sockets socks soda sofa soft softball softening
softly software soil solar sold soldier soldiers sole solely solicitor solid solidarity solitary solo solution
solutions solve solved solving some somebody someday somehow someone someone's someones someplace somersault
something something's sometime sometimes somewhat somewhere son son's song songs sons soon sooner soothe
sophisticated sore sorrow sorry sort sorted sorting sortname sorts sought soul souls sound sounded soundly
sounds soundtrack soup sour source source-only source-server sources souvenir sovereign sovereignty spa space
spaces spacing spacious spade spaghetti span spare spared spark sparked sparring sparse sparse-checkout
spatula spawn speak speaker speakers speaking speaks spear spec special specialised specialist specialists
specialized specially specialty species specific specifically specification specifications specified specifier
specifies specify specifying spectacle spectacular spectators speculation speech speeches speechless speed
speeding speeds spell spelling spend spending spends spent sphere spicy spider spiders spike spiked spikes
spill spilled spilt spin spinach spine spinner spinning spins spiral spirit spirits spiritual spit spite
splash splashed splashes splashing splendid split splitting spoil spoiled spoke spoken spokesman spokesperson
spokeswoman sponge sponsor sponsored sponsorship spontaneous spool spoon sport sporting sports sportspeople
sporty spot spotlight spots spotted spouse sprained spray sprayed spraying sprays spread spreading spreads
spreadsheet spree spring sprinkler sprinklers spy spying squad square squares squash squat squats squatters
squatting squeeze squeezed squeezing squirrel squirrels src ssh st stabbed stabilise stability stabilize
stable stack stacked stacking stacks stadium staff stage staged stages staggered staging stain stained stair
staircase stairs stairway stairwell stake stakes stale stall stalled stamp stamps stance stand standalone
standard standards standby standing stands stanza stapler star stare stared stares staring stark starring
stars start start-up started starting startled starts startup starvation starve starved starving stash stat
state state's state-owned stated statement statements statesman static stating station stations statistical
statistics statoverride stats statue statues status statute stay stayed staying stays stderr stdin stdin-packs
stdio stdout steadily steady steak steaks steal stealing steals steam steel steep steer steering steers stem
step stepfather stepped stepper stepping steps stereo stern stew steward stewardess stewards stick sticking
sticks sticky stiff still stilts stimulation stingy stink stir stirred stirring stock stockings stocks stole
stolen stomach stomachache stone stone's stones stony stood stool stools stoop stop stopped stopping stops
storage store stored storefront storefronts stores stories storing storm stormed storms stormy story stove
straight straightforward strain strained stranded strange strangely stranger strangers strangled strap
strapped strategic strategies strategy straw strawberries strawberry straws stray streaks stream streamed
streaming streams street streetlight streets strength strengthen strengthened strengthening strengths stress
stressed stresses stressful stretch stretched stretches stretching strewn strftime stricken strict strictly
stride strike striker strikes striking string string2 stringed strings strip stripe striped stripes stripped
strips striving stroke stroll stroller strollers strolling strolls strong stronger strongest stronghold
strongly struck struct structural structure structures struggle struggled struggles struggling stubborn stuck
student students studied studies studio study studying stuff stuffed stuffy stumbled stump stunned stunning
stunt stunts stupid stupidest style styles stylish stylist subarray subcommand subdirectories subdirectory
subject subjected subjective subjects subkey subkeys submarine submenu submerged submission submit submitted
submodule submodules subpattern subprime subprocess subquery subroutine subscript subscription subscriptions
subsequent subsequently subsidiary subsidies subsidy substance substances substantial substantially substitute
substituted substituting substitution substr substring subtitled subtitles subtract subtransaction subtree
subtype suburb suburban suburbs subway succeed succeeded succeeds success successes successful successfully
successor such sucking sudden suddenly sue sued suffer suffered sufferers suffering suffers sufficient
sufficiently suffix suffixes suffrage sugar suggest suggested suggesting suggestion suggestions suggests
suicidal suicide suit suitable suitably suitcase suitcases suite suited suits sum summarize summary summed
summer summit summoned sumo sums sun sunbathing sunburn sundress sung sunglasses sunk sunlight sunny sunrise
sunscreen sunset sunshine superb superior superman supermarket supermarkets superproject superuser superusers
supervised supervising supervision supervisor supervisory supper supplementary supplied supplier suppliers
supplies supply support supported supporter supporters supporting supportive supports suppose supposed
supposedly suppress suppressed sure surely surf surface surfboard surfer surfers surfing surfs surge surgeon
surgeons surgeries surgery surgical surprise surprised surprises surprising surprisingly surrender surrendered
surrogate surround surrounded surrounding surroundings surveillance survey surveyed surveys survival survive
survived surviving survivors sushi suspect suspected suspects suspend suspended suspenders suspension
suspicion suspicions suspicious suspiciously sustain sustainable sustained swallow swallowed swallowing swam
swan swap swapped swear sweat sweater sweaters sweating sweatshirt sweatshirts sweatsuit sweaty sweep sweeping
sweeps sweet sweeter sweets swept swerve swiftly swim swimmer swimmers swimming swims swimsuit swimsuits swing
swinging swings switch switched switching swollen sword swords swore sworn syllable symbol symbolic symbols
symlink symlinks symmetric sympathize sympathy symptoms sync synchronization synchronize synchronized
synchronous syncing synonym syntax syrup syslog system system's systematic systematically systems sysv t
t-shirt t-shirts tab table tablecloth tables tablespace tablespaces tablet tablets tabs tackle tackled tackles
tackling tactic tactical tactics tag tagged tags tail take taken takeover takes taking tale talent talented
tales talk talkative talked talker talking talks tall taller tallest tame tan tank tanker tanks tap tape
tapped tapping tar tarball tarfile target target-directory targeted targeting targets tarp task tasks taste
tasted tastes tasting tasty tattoo tattooed tattoos taught tax taxes taxi taxis taxpayer taxpayers tcb tcp tea
teach teacher teacher's teachers teaches teaching teal team team's teammate teammates teams tear tears teased
teasing tech technical technician technicians technique techniques technological technologies technology teddy
tee teen teenage teenager teenagers teens teeth telecommunications telegram telephone telephoned telephones
telescope televised television tell telling tells temp temper temperament temperature temperatures template
template0 templates temple temples temporarily temporary tempt temptation tempted tempting ten ten-minute
tenants tend tendency tender tenders tending tends tennis tens tense tension tensions tent tenth tents term
terminal terminals terminate terminated terminates terminating termination terminator terms terrace terraced
terrain terrible terribly terrier terrific terrified terrifying territories territory terror terrorism
terrorist terrorists terse test test-helper tested testify testimony testing testosterone tests text textbook
textbooks texted textile texting texts textual th than thank thanked thankful thanks that that'll that's the
theater theaters theatre theatres theft thefts their theirs them theme themed themes themselves then theories
theory therapy there there's thereby therefore thermal thesaurus these thesis they they'd they'll they're
they've thick thickness thief thieves thin thing things think thinking thinks thinner third third-party thirds
thirst thirsty thirteen thirties thirty thirty-one this thorns thorough thoroughly those though thought
thoughtful thoughts thousand thousands thread threads threat threaten threatened threatening threatens threats
three three-day three-month three-pointers three-year threshold threw thrilled throat throne through
throughout throw throwing thrown throws thrust thumb thumbnail thumbs thunder thus tiara ticagrelor ticket
tickets ticks tides tidy tie tied ties tiger tight tightening tightly tights tilde tile tiled tiles till time
time's timed timeline timeout timer times timestamp timestamps timetable timezone timid timing tin tiny tip
tipped tipping tips tipsy tire tired tires tissue tissues title titlebar titled titles tmp to toast toaster
tobacco today today's toddler toddlers todo toe toenails toes tofu together toggle toilet toilets token tokens
told tolerance tolerant tolerate tolerated toll tolls tomato tomatoes tomb tomorrow tomorrow's tone tongs
tongue tonight tonnes tons too took tool toolbar tools tooltip tooth toothache toothbrush toothpaste top topic
topics topless toplevel tops torch torches tore torn tornado torture tortured toss tossed tossing total
totalling totally touch touched touches touching touchpad tough tougher tour tourism tourist tourists
tournament tours tow toward towards towed towel towels tower towers town towns toxic toy toys trace traced
traces track tracked tracking tracks tracksuit tractor trade trademark trader traders tradesmen trading
tradition traditional traditionally traditions traffic traffickers trafficking tragedy tragic trail trailer
trailers trailing train trained trainees trainer training trains traitor tram trampoline transaction
transaction's transactions transfer transferred transfers transform transformed transformer transfusion
transit transition transitional transitions translate translated translating translation translations
translator transmission transmitted transparency transparent transport transportation transported transporting
trap trapped traps trash trashcan trauma travel traveled traveler travelers traveling travelled travellers
travelling travels traverse tray trays treadmill treason treasure treat treated treaties treating treatment
treatments treats treaty tree tree-ish tree-lined trees trembling tremendous trench trend trends trendy trial
trials triangle tribal tribe tribunal tribute trick tricked tricks tricky tricycle tried tries trifles trigger
trigger's triggered triggers trim trimmed trimming trio trip triple tripod tripped trips triumph trivial
trolley trombone troop troops trophy tropical trotting trouble troubled troublemaker troubles trough trousers
truck trucks true truly trumpet truncate truncated truncating truncation trunk trunks trust trustdb trusted
trusting trusts trustworthy truth truthful try trying tryptophan tsquery tsunami tsvector tty tty_open tub
tube tubes tucked tug-of-war tugging tuition tulips tumbling tuna tune tunes tunic tunnel tunnels tuple tuples
tuplestore turban turbines turbulence turf turmoil turn turned turning turnover turns turquoise turtle turtles
tutu tux tuxedo tv tweet tweets twelve twenties twenty twenty-five twice twilight twin twins twist twisted
twisting two two-party two-phase two-thirds two-time two-way txt tying type typed types typewriter typhoon
typical typically typing u udp ugliest ugly uid uit ukulele ultimate ultimately ultrasound ultraviolet umask
umbrella umbrellas umpire un unable unacceptable unaffected unaligned unambiguously unanimously unarmed unary
unattended unavailable unavoidable unaware unbearable unbeaten unbelievable unbelievably unblock unbuffered
uncertain uncertainty unchanged uncle uncle's unclear uncomfortable uncommitted uncommon uncompressed
unconditional unconscious unconventional uncovered und undecided undefined under undercover underestimate
underestimated underflow undergo undergone underground underline underlined underlines underlying undermined
underneath underscore underscores understand understandable understanding understands understood undertake
undertaken undertook underwater underway underwear undocumented undone undoubtedly undressing uneasy
unemployed unemployment unequal unexpected unexpectedly unfair unfamiliar unfinished unfit unfolded
unforgettable unfortunate unfortunately unfriendly unhandled unhappy unharmed unhealthy unhurt unicycle
unidentified unified uniform uniformed uniforms unimaginable unimaginative unimportant uninitialized uninsured
unions unique uniquely unison unit unite units unity universal universe universities unix unkind unknown
unlawful unleashed unless unlike unlikely unlimited unlink unload unloading unlock unlocked unlocking unlogged
unlucky unmarried unmatched unmaximize unmerged unmount unnamed unnecessary unnoticed unofficial unorthodox
unpack unpacked unpacking unparsing unpleasant unpopular unprecedented unpredictable unquoted unreachable
unreadable unreasonable unrecognised unrecognized unrelated unreliable unresolved unrest unsafe unsaid unset
unsettled unsigned unsociable unspecified unstable unstage unstaged unsuccessful unsupported unsure
unterminated untie until untracked untranslated untrusted untrustworthy unusable unused unusual unusually
unwilling up up-to-date upcoming updatable update update-ref updated updates updating upgrade upgraded
upgrades upgrading upheld uphill upload uploaded upon upper uppercase upright ups upset upside upstairs
upstream upward upwards uranium urban urge urged urgency urgent urgently uri url us usable usage use used
useful useless user user's user-defined user-friendly username users uses using usr usual usually utility
utmost utter utterly v v2 v3 vacancies vacant vacation vacations vaccinated vaccination vaccinations vaccines
vacuum vacuumed vacuuming vague vain valid validate validation validity valuable valuables value value-pattern
valued values vampire van vandalism vanilla vanished vans var variable variables variant variations varied
varies variety various vary varying vase vast vector vegetable vegetables vegetarian vegetarians vegetation
vehicle vehicles veil vending vendor vendors vengeance ventilation venture venue verbal verbose verdict verge
verification verified verify verifying version versions versus vertebrate vertical very vessel vest vests vet
veteran veterans veto via viable vibrant vice vice-president vicinity vicious victim victim's victims
victories victorious victory video videos view viewed viewer viewers viewing viewpoint views vigil vigorously
village villagers villages vintage vinyl violate violated violates violating violation violations violence
violent violet violin violinist viral virtual virtually virtue virus viruses visa visas visibility visible
visibly vision visit visited visiting visitor visitors visits visor visual vital vitamin vitamins vivid
vocabulary vocal vocalist vocation vocational vodka voice voiced voices void volatile volatility volcano
volleyball volume volumes voluntarily voluntary volunteer volunteered volunteers von vote voted voter voters
votes voting vowed voyage vs vulnerable w wading wage wages wagon waist wait waited waiter waiters waiting
waitress waits wake wakeboard wakes waking wal_level walk walked walker walkers walking walks walkway wall
wallet walls wandered wandering wanna want wanted wanting wants war ward wardrobe wards warehouse wares warm
warmed warmer warming warmly warn warned warning warnings warns warp warrant warrants warranty warrior wars
wary was wash washed washer washes washing wasn't waste wasted wasteful wasting watch watchdog watched watches
watching watchpoint water water's watercraft watered waterfall waterfront watering watermelon watermelons
waterproof waters waterside waterskiing waterway wave waved waves waving way ways we we'd we'll we're we've
weak weakened weaker weakest weakness weaknesses wealth wealthy weapon weapons wear wearing wears weather
weathered weave weaving web website websites wedding weeds week week's weekday weekend weekends weekly weeks
weigh weighed weighing weighs weight weights weird welcome welcomed welding welfare well well-dressed well-
known went wept were weren't wet wetsuit whale whales what what'll what're what's whatever whatis whatsoever
wheat wheel wheelbarrow wheelchair wheelchairs wheeled wheeler wheelie wheels when whenever where whereabouts
whereas wherever whether which whichever while whilst whip whiskey whispered whispering whistle whistled
whistling white white-haired whitespace who who'll who's whoever whole whole-row wholeheartedly wholesale whom
whose why wicked wide widely widened wider widespread widget widgets width wife wife's wig wild wildcard
wildcards wilderness wildly will willing willingly willingness win wind windbreaker winding window windows
winds windshield windy wine wineglasses wing wings wink winked winks winner winners winning wins winter
winters wipe wiped wipes wiping wire wires wisdom wise wisely wiser wish wished wishes wishing witch witches
with withdraw withdrawal withdrawn withdrew within without witness witnessed witnesses witty wives woke woken
wolf wolves woman woman's women women's won won't wonder wondered wonderful wonderfully wondering wonders wood
wooded wooden woodland woods wool word words wore work workaholic worked worker workers workforce working
workload workman workout workplace works workshop workspace workspaces worktree world world's world-famous
worlds worldwide worm worms worn worried worries worry worrying worse worsened worst worth worthwhile worthy
would would've wouldn't wound wounded wounds woven wrap wraparound wrapped wrapper wrapping wraps wreaths
wreck wreckage wrestle wrestler wrestlers wrestling wrist writable write write-ahead writer writers writes
writing written wrong wrongly wrote www x x-content xml xx xylophone xz y yacht yard yards yarn yawn yawning
year year's year-end year-old years yell yelled yelling yellow yen yes yesterday yesterday's yet yield yields
yo-yo yoga yogurt you you'd you'll you're you've young younger youngest youngsters your yours yourself
yourselves youth youths z zebra zero zero-length zeros zic zip zombie zone zones zoo zoom zstd zu županija
""".split())

TRANSLATED = frozenset("""
A's Abkhazia Academy Afghan Africa African African-American Africans Agta Albanian Algeria Alice Alpine Alps
Alt AltGr Alvarez America America's American Americans Antarctic Antenna Anti-Doping Apache AppStream Arab
Arabia Arabian Arabic Aramaic Arctic Argentina Asia Asian Asians Athens Atlantic Aug Australia Australian
Austria Austria's Austrian Awyu BBC's Bachar Baden Baghdad Balkan Baltic Bangladesh Basque Bavaria Bavarian
Beijing Belarus Belarusian Belgian Belgium Belgrade Bible Bikol Binladin Bohemia Bolivian Bontok Bosnia
Bosnian Bosnians Brazil Brazilian Breton Brexit Brillo Britain Britain's British Brits Brittany Brno Brown's
Brussels Buddhist Budějovice Bulgaria Bulgarian Bulgarians Bundesliga Bundestag Bureau Bush's Caesar Cairo
California Cambodia Cameron's Cameroon Canada Canadian Canadians Caribbean Carpathians Catalan Catalonia
Catholic Catholics Caucasian Central Chad Chamber Championship Championships Chancellor Chapel Chin China's
Chinantec Chinese Christian Christmas Claus Clinton's Cologne Colombia Commission Commissioner Commons
Confederation Congo Congress Consular Copenhagen Corbyn's Cortes Councilor Counsel Cree Creole Crimea Croatia
Croatian Ctrl Cuba Cuban Cyrillic Czech Czechia Czechoslovakia Czechs Côte Damascus Dani Danish December Deka
Democrat Democratic Democrats Denmark Department's Diaz Dinka Dusseldorf Dutch EH-partial EPA's East Easter
Eastern Eatonville's Ebola Ecumenical Edo Egypt Egyptian Eiffel Energie England's English Englishman
Englishmen Englund's Ensign's Estonia Ethiopia Ethiopia's Europe Europe's European Europeans Eve February
Federal Federation Fernandez Ferris Fifa Finland Finnish Fischerbach Florence Franc France France's Franconia
Frankfurt's Freie French Frenchman Friday Fridays Frisian Fulfulde GStreamer Galerie Gateway Gaudi's Gbe
Geneva Georgy German Germanic Germans Germany Germany's God Golan Gonzalez Gov Greece Greek Greenland Greens
Guerini Guinea Gulf Günther Haitians Hallae Hangul Hanover Havana Hawaiian Hebrew Hernandez Hesse Highland
Hilarius Hispanic Hmong Holland Honduran Hong Hospice Huasteca Huishui Hungarian Hungary Hungary's Héma-Québec
I'd I'll I'm I've IDs IPv4 IPv6 India Indian Indians Indonesia Indonesia's Indonesian Institute Interior
Iran's Iranian Iranians Iraq Iraq's Iraqi Ireland Irish Islamic Islamisation Islands Israeli Italian Italians
Italy Italy's Ivory Jackson's January Jančura Japan's Japanese Jesus Jewish Jochner-Weiss John John's Jonas
Jose July June Kazakhstan Kenya Kenyan Kerberos Kibar Kiev Kingdom Klitchko Kong Kong's Korea Korean Kremlin
Krkonoše Kurdish Kurds Kyoto Kyushu Lama’s Larsen Latin Latino Legos Liberation Liberty Libya Libyan London's
Lopez Lord Lowland Lukas Lukashenko Luxembourg MPs Macedonia Malagasy Malay Malmo March Mary Mary's Mashan
McDonald's Mediterranean Metcash's Mexican Mexico Milan Minister Ministry Mixtec Mohawk Monday Monday's
Mondays Mongolian Moore's Moravia Morocco Moscow Mr Mrs Ms Mt Muhammad Munich Muslim Muslims N'th NUL-
terminated Naga Nahuatl Naples Neo-Aramaic Netherlands Neymar's Nečas Niger Nigerian Nile Nisu Nobel North
Northern Northwest Northwestern Norway Norwegian Nth Oaxaca Obama's Observatory Oct October Ojibwa Olympic
Olympics OpenPGP Oromo Oscar Otomi PMQs Pacific Pakistan's Pakistani Palatinate Palestinian Palestinians Pango
Paniai Papua's Papuans Pejsek Pelikan Penal Peninsula Perez Persian Philharmonic Philippines Phillip Pilsen
Plauen Pleiades Poland Polish Pomo Pope Portuguese PostgreSQL PostgreSQL's Prague Prime Puebla Putin's Qantas
Qatar Qiandong Qt Quechua Queen Quichua Rennsteig Republic Republican Republicans Respublika Rhine Rhine-
Westphalia Rhineland Rhineland-Palatinate Rhön Rican Roma Roman Romani Romania Romanian Romans Rome Rupee
Russia Russia's Russian Russians SELinux SMEs SOCKSv5 Saint Salzwedel Sami Sanchez Santa Saturday Saturdays
Saudi Saxon Saxony Schengen Sciences Scotland Scots Scottish Securitate Senate Senoufo Sept Serbia Serbian
Sheng Shia Singapore Slavic Slavonic Slovak Slovenia Socialist Socialists Solomon Sooners South Southeast
Southeastern Southern Southwestern Soviet Spain Spain's Spanish SpongeBob States Stradivarius Stuttgart
Sudanese Sunday Sunday's Sundays Sunni Supreme Sweden Swedish Swiss Switzerland Symphony Syria Syrian Syrians
Tanzania Tarahumara Tatar Tcl Telecom Thai Thames Thanksgiving Thuringia Thursday Thursday's Tibetan Tokyo
Tom's Topolánek Tory Totonac Tracker Treasury Triassic Trump's Tuesday Tuesday's Turkey Turkey's Turkish Turks
UFOs Ukrainian Unicode Uniforum United University Unix-domain Valentine's Valley Vaněk Venice Verde Victoria's
Vienna Vietnam Vietnamese Vikings Virgin Wallachian Warhol’s Warsaw Wednesday Wednesday's West WestLB Western
Wiesn Wolfratshausen X-ray XPath Yeah Yemen Yugoslavia Yugoslavian Zambia Zapotec Zealand Zizhiqu Zurich České
Šumava
""".split())
